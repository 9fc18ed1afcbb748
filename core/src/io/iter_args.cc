#include "io/iter_args.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <utility>

#include "mxplug/error.h"

namespace mxplug::io {

bool IterArgs::Find(const std::string& name, std::string* text) {
  known_.push_back(name);
  auto it = kwargs_.find(name);
  if (it == kwargs_.end()) return false;
  *text = it->second;
  kwargs_.erase(it);
  return true;
}

void IterArgs::Bad(const std::string& name, const std::string& text,
                   const std::string& expected) const {
  throw Error(iter_ + ": argument '" + name + "' is '" + text + "', expected " + expected,
              kMXPInvalidArgument);
}

void IterArgs::Missing(const std::string& name) const {
  throw Error(iter_ + ": argument '" + name + "' is required", kMXPInvalidArgument);
}

std::string IterArgs::TakeString(const std::string& name, const std::string& fallback) {
  std::string text;
  return Find(name, &text) ? text : fallback;
}

std::string IterArgs::TakeString(const std::string& name) {
  std::string text;
  if (!Find(name, &text)) Missing(name);
  return text;
}

int IterArgs::TakeInt(const std::string& name, int fallback, int min_value) {
  std::string text;
  if (!Find(name, &text)) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < min_value || value > 0x7fffffff)
    Bad(name, text, "an integer >= " + std::to_string(min_value));
  return static_cast<int>(value);
}

float IterArgs::TakeFloat(const std::string& name, float fallback) {
  std::string text;
  if (!Find(name, &text)) return fallback;
  char* end = nullptr;
  const float value = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value)) Bad(name, text, "a finite number");
  return value;
}

std::optional<int> IterArgs::TakeOptionalInt(const std::string& name, int min_value) {
  auto it = kwargs_.find(name);
  if (it != kwargs_.end() && it->second == "None") kwargs_.erase(it);
  if (kwargs_.count(name) == 0) {
    known_.push_back(name);
    return std::nullopt;
  }
  return TakeInt(name, 0, min_value);
}

std::optional<float> IterArgs::TakeOptionalFloat(const std::string& name) {
  auto it = kwargs_.find(name);
  if (it != kwargs_.end() && it->second == "None") kwargs_.erase(it);
  if (kwargs_.count(name) == 0) {
    known_.push_back(name);
    return std::nullopt;
  }
  return TakeFloat(name, 0.f);
}

int IterArgs::TakeInt(const std::string& name, int min_value) {
  if (kwargs_.count(name) == 0) Missing(name);
  return TakeInt(name, 0, min_value);
}

bool IterArgs::TakeBool(const std::string& name, bool fallback) {
  std::string text;
  if (!Find(name, &text)) return fallback;
  if (text == "True" || text == "true" || text == "1") return true;
  if (text == "False" || text == "false" || text == "0") return false;
  Bad(name, text, "True, False, 1 or 0");
}

namespace {

// The items of a tuple argument: "(3, 28, 28)", "[3,28,28]", "(2,)" or "2"; false when the text
// is not one.
bool SplitTuple(const std::string& text, std::vector<std::string>* items) {
  size_t i = 0;
  const bool bracketed = !text.empty() && (text[0] == '(' || text[0] == '[');
  const size_t end = bracketed ? text.size() - 1 : text.size();
  if (bracketed && (text.size() < 2 || (text[end] != ')' && text[end] != ']'))) return false;
  if (bracketed) ++i;
  while (i < end) {
    while (i < end && (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ',')) ++i;
    size_t j = i;
    while (j < end && text[j] != ',' && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) items->push_back(text.substr(i, j - i));
    i = j;
  }
  return !items->empty();
}

}  // namespace

TShape IterArgs::TakeShape(const std::string& name, const TShape& fallback) {
  std::string text;
  if (!Find(name, &text)) return fallback;
  std::vector<std::string> items;
  if (!SplitTuple(text, &items)) Bad(name, text, "a shape such as (3, 28, 28)");
  std::vector<int64_t> dims;
  for (const std::string& item : items) {
    char* end = nullptr;
    const long long dim = std::strtoll(item.c_str(), &end, 10);
    if (*end != '\0' || dim < 1 || dim > (1LL << 40))
      Bad(name, text, "a shape of positive sizes such as (3, 28, 28)");
    dims.push_back(dim);
  }
  return TShape(std::move(dims));
}

std::vector<float> IterArgs::TakeFloats(const std::string& name,
                                        const std::vector<float>& fallback) {
  std::string text;
  if (!Find(name, &text)) return fallback;
  std::vector<std::string> items;
  if (!SplitTuple(text, &items)) Bad(name, text, "a tuple of numbers such as (0.1, 0.3)");
  std::vector<float> values;
  for (const std::string& item : items) {
    char* end = nullptr;
    const float value = std::strtof(item.c_str(), &end);
    if (*end != '\0' || !std::isfinite(value))
      Bad(name, text, "a tuple of numbers such as (0.1, 0.3)");
    values.push_back(value);
  }
  return values;
}

void IterArgs::Ignore(const std::vector<std::string>& names) {
  std::string unused;
  for (const std::string& name : names) Find(name, &unused);
}

void IterArgs::IgnoreTheRest() const {
  if (kwargs_.empty()) return;
  static std::mutex mutex;
  static std::set<std::string> logged;
  std::string takes;
  for (const std::string& name : known_) takes += (takes.empty() ? "" : ", ") + name;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [name, value] : kwargs_)
    if (logged.insert(iter_ + "." + name).second)
      std::fprintf(stderr,
                   "[mxplug] %s: ignoring argument '%s', which it does not take (it takes %s)\n",
                   iter_.c_str(), name.c_str(), takes.c_str());
}

}  // namespace mxplug::io
