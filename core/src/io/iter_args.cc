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

TShape IterArgs::TakeShape(const std::string& name, const TShape& fallback) {
  std::string text;
  if (!Find(name, &text)) return fallback;
  // "(3, 28, 28)", "[3,28,28]", "(2,)" or "2".
  std::vector<int64_t> dims;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ','))
      ++i;
  };
  const bool bracketed = !text.empty() && (text[0] == '(' || text[0] == '[');
  if (bracketed) ++i;
  for (skip(); i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); skip()) {
    char* end = nullptr;
    const long long dim = std::strtoll(text.c_str() + i, &end, 10);
    if (dim < 1 || dim > (1LL << 40))
      Bad(name, text, "a shape of positive sizes such as (3, 28, 28)");
    dims.push_back(dim);
    i = static_cast<size_t>(end - text.c_str());
  }
  const bool closed =
      bracketed ? (i + 1 == text.size() && (text[i] == ')' || text[i] == ']')) : i == text.size();
  if (dims.empty() || !closed) Bad(name, text, "a shape such as (3, 28, 28)");
  return TShape(std::move(dims));
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
