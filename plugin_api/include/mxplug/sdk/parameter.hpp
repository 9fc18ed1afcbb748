/*!
 * \file mxplug/sdk/parameter.hpp
 * \brief Parameter structs with typed fields (default, range or choices, doc), after dmlc's
 * Parameter, which MXNet operators use. One declaration feeds kwargs parsing, the CLI's
 * `mxplug describe` and Python docstrings.
 *
 * \code
 * struct FullyConnectedParam : mxplug::Parameter<FullyConnectedParam> {
 *   int num_hidden;
 *   bool no_bias;
 *   MXPLUG_DECLARE_PARAMETER(FullyConnectedParam) {
 *     MXPLUG_DECLARE_FIELD(num_hidden).set_lower_bound(1).describe("Number of hidden nodes.");
 *     MXPLUG_DECLARE_FIELD(no_bias).set_default(false).describe("Disable the bias.");
 *   }
 * };
 * \endcode
 */
#ifndef MXPLUG_SDK_PARAMETER_HPP_
#define MXPLUG_SDK_PARAMETER_HPP_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mxplug/abi/op.h"
#include "mxplug/sdk/tshape.hpp"

namespace mxplug {

/*! \brief Keyword arguments as strings, in the order given (MXNet passes every value as text). */
using KwArgs = std::vector<std::pair<std::string, std::string>>;

/*! \brief A kwargs value that does not parse or is out of range; the text names op and field. */
class ParamError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/*! \brief One declared field: its metadata and how to parse text into it. */
struct FieldInfo {
  std::string name;
  int32_t type = kMXPParamString;  // MXPParamType
  std::string type_text;
  bool has_default = false;
  std::string default_text;
  bool has_lower = false, has_upper = false;
  double lower = 0, upper = 0;
  bool optional = false;                                     // accepts "None"
  std::vector<std::pair<std::string, int64_t>> enum_values;  // for kMXPParamEnum
  std::string doc;
  size_t offset = 0;
  // Parses `text` into the field at `field`; returns false when the text is not of the type.
  bool (*parse)(const FieldInfo& info, void* field, const std::string& text) = nullptr;
  // Reads the field back as a number for the bounds check; false for non-numbers and None.
  bool (*as_number)(const void* field, double* out) = nullptr;
  void (*assign_default)(const FieldInfo& info, void* field) = nullptr;
  std::string default_storage;  // the default, as text understood by parse

  /*! \brief What a valid value looks like: "an integer >= 1", "one of 'max', 'avg'". */
  std::string Expected() const {
    std::string s;
    switch (type) {
      case kMXPParamInt:
        s = "an integer";
        break;
      case kMXPParamFloat:
        s = "a number";
        break;
      case kMXPParamBool:
        s = "a boolean (true, false, 1 or 0)";
        break;
      case kMXPParamShape:
        s = "a shape such as (2, 3)";
        break;
      case kMXPParamEnum: {
        s = "one of ";
        for (size_t i = 0; i < enum_values.size(); ++i)
          s += (i ? ", '" : "'") + enum_values[i].first + "'";
        break;
      }
      default:
        s = type_text == "tuple of <float>" ? "a tuple of numbers such as (0.1, 0.2)" : "a string";
    }
    if (has_lower && has_upper)
      s += " in [" + FormatBound(lower) + ", " + FormatBound(upper) + "]";
    else if (has_lower)
      s += " >= " + FormatBound(lower);
    else if (has_upper)
      s += " <= " + FormatBound(upper);
    if (optional) s += ", or None";
    return s;
  }

  static std::string FormatBound(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, r.ptr);
  }
};

namespace sdk {

inline std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

inline bool ParseInt64(const std::string& text, int64_t* out) {
  std::string t = Trim(text);
  if (!t.empty() && t[0] == '+') t.erase(0, 1);
  auto r = std::from_chars(t.data(), t.data() + t.size(), *out);
  return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size();
}

inline bool ParseDouble(const std::string& text, double* out) {
  std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

inline bool ParseBool(const std::string& text, bool* out) {
  std::string t = Trim(text);
  if (t == "1" || t == "true" || t == "True") return *out = true, true;
  if (t == "0" || t == "false" || t == "False") return *out = false, true;
  return false;
}

/*! \brief A tuple's items, each read by `item` (false: not one): "(2, 3)", "[2,3]", "(5,)", "()"
 * or a bare "5". */
template <typename T, typename ParseItem>
bool ParseTuple(const std::string& text, ParseItem item_parser, std::vector<T>* out) {
  std::string t = Trim(text);
  if (t.empty()) return false;
  char open = t.front();
  if (open == '(' || open == '[') {
    char close = open == '(' ? ')' : ']';
    if (t.back() != close) return false;
    t = t.substr(1, t.size() - 2);
  }
  std::vector<T> items;
  if (!Trim(t).empty()) {
    size_t pos = 0;
    for (;;) {
      size_t comma = t.find(',', pos);
      std::string item = Trim(t.substr(pos, comma == std::string::npos ? comma : comma - pos));
      bool last = comma == std::string::npos;
      if (item.empty()) {
        if (!(last && !items.empty())) return false;  // only "(5,)" may end in an empty item
      } else {
        T v{};
        if (!item_parser(item, &v)) return false;
        items.push_back(v);
      }
      if (last) break;
      pos = comma + 1;
    }
  }
  *out = std::move(items);
  return true;
}

inline bool ParseShape(const std::string& text, TShape* out) {
  std::vector<int64_t> dims;
  if (!ParseTuple(text, ParseInt64, &dims)) return false;
  *out = TShape(std::move(dims));
  return true;
}

/*! \brief A tuple of numbers (MXNet's "tuple of <float>"), written as a shape is. */
inline bool ParseFloats(const std::string& text, std::vector<float>* out) {
  return ParseTuple(
      text,
      [](const std::string& item, float* v) {
        double d = 0;
        return ParseDouble(item, &d) && (*v = static_cast<float>(d), true);
      },
      out);
}

inline std::string FormatDouble(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {
  using Value = T;
  using type = T;  // so that FieldEntry can unwrap optional and plain fields alike
};

// ---- Section: per-type parsing ----

template <typename T>
constexpr int32_t FieldKind() {
  if constexpr (std::is_same_v<T, bool>)
    return kMXPParamBool;
  else if constexpr (std::is_integral_v<T>)
    return kMXPParamInt;
  else if constexpr (std::is_floating_point_v<T>)
    return kMXPParamFloat;
  else if constexpr (std::is_same_v<T, TShape>)
    return kMXPParamShape;
  else if constexpr (std::is_same_v<T, std::vector<float>>)
    return kMXPParamString;  // by text
  else {
    static_assert(std::is_same_v<T, std::string>, "unsupported parameter field type");
    return kMXPParamString;
  }
}

template <typename T>
const char* FieldTypeText() {
  if constexpr (std::is_same_v<T, bool>)
    return "boolean";
  else if constexpr (std::is_integral_v<T>)
    return "int";
  else if constexpr (std::is_floating_point_v<T>)
    return "float";
  else if constexpr (std::is_same_v<T, TShape>)
    return "Shape(tuple)";
  else if constexpr (std::is_same_v<T, std::vector<float>>)
    return "tuple of <float>";
  else
    return "string";
}

template <typename T>
bool ParseValue(const FieldInfo& info, const std::string& text, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    return ParseBool(text, out);
  } else if constexpr (std::is_integral_v<T>) {
    int64_t v = 0;
    if (!info.enum_values.empty()) {
      std::string t = Trim(text);
      for (const auto& e : info.enum_values)
        if (e.first == t) return *out = static_cast<T>(e.second), true;
      return false;
    }
    if (!ParseInt64(text, &v)) return false;
    if constexpr (std::is_unsigned_v<T>) {
      if (v < 0) return false;
    }
    if (static_cast<long double>(v) > static_cast<long double>(std::numeric_limits<T>::max()) ||
        static_cast<long double>(v) < static_cast<long double>(std::numeric_limits<T>::lowest()))
      return false;
    *out = static_cast<T>(v);
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    double v = 0;
    if (!ParseDouble(text, &v)) return false;
    *out = static_cast<T>(v);
    return true;
  } else if constexpr (std::is_same_v<T, TShape>) {
    return ParseShape(text, out);
  } else if constexpr (std::is_same_v<T, std::vector<float>>) {
    return ParseFloats(text, out);
  } else {
    *out = text;
    return true;
  }
}

template <typename T>
std::string FormatValue(const FieldInfo& info, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    for (const auto& e : info.enum_values)
      if (e.second == static_cast<int64_t>(v)) return e.first;
    return std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return FormatDouble(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, TShape>) {
    return v.ToString();
  } else if constexpr (std::is_same_v<T, std::vector<float>>) {
    std::string text = "(";
    for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + FormatDouble(v[i]);
    return text + (v.size() == 1 ? ",)" : ")");
  } else {
    return v;
  }
}

template <typename F>
bool ParseField(const FieldInfo& info, void* field, const std::string& text) {
  if constexpr (IsOptional<F>::value) {
    auto* opt = static_cast<F*>(field);
    if (Trim(text) == "None") return opt->reset(), true;
    typename IsOptional<F>::Value v{};
    if (!ParseValue(info, text, &v)) return false;
    *opt = v;
    return true;
  } else {
    return ParseValue(info, text, static_cast<F*>(field));
  }
}

template <typename F>
bool FieldAsNumber(const void* field, double* out) {
  if constexpr (IsOptional<F>::value) {
    const auto& opt = *static_cast<const F*>(field);
    using V = typename IsOptional<F>::Value;
    if (!opt || !std::is_arithmetic_v<V> || std::is_same_v<V, bool>) return false;
    if constexpr (std::is_arithmetic_v<V>) *out = static_cast<double>(*opt);
    return true;
  } else if constexpr (std::is_arithmetic_v<F> && !std::is_same_v<F, bool>) {
    *out = static_cast<double>(*static_cast<const F*>(field));
    return true;
  } else {
    return false;
  }
}

template <typename F>
void AssignDefault(const FieldInfo& info, void* field) {
  ParseField<F>(info, field, info.default_storage);
}

}  // namespace sdk

/*! \brief Fluent declaration of one field (returned by MXPLUG_DECLARE_FIELD). */
template <typename F>
class FieldEntry {
 public:
  using Value = typename std::conditional_t<sdk::IsOptional<F>::value, sdk::IsOptional<F>,
                                            std::enable_if<true, F>>::type;

  explicit FieldEntry(FieldInfo* info) : info_(info) {}

  FieldEntry& set_default(const F& v) {
    info_->has_default = true;
    if constexpr (sdk::IsOptional<F>::value) {
      info_->default_storage = v ? sdk::FormatValue(*info_, *v) : "None";
    } else {
      info_->default_storage = sdk::FormatValue(*info_, v);
    }
    info_->default_text = info_->default_storage;
    info_->assign_default = &sdk::AssignDefault<F>;
    return *this;
  }
  /*! \brief `set_default(std::nullopt)` for an optional field: the default is None. (Its own
   * overload, so that no empty optional is formatted: GCC warns about reading its payload.) */
  FieldEntry& set_default(std::nullopt_t) {
    static_assert(sdk::IsOptional<F>::value, "only an optional field can default to None");
    info_->has_default = true;
    info_->default_storage = info_->default_text = "None";
    info_->assign_default = &sdk::AssignDefault<F>;
    return *this;
  }
  FieldEntry& set_lower_bound(double v) { return info_->has_lower = true, info_->lower = v, *this; }
  FieldEntry& set_upper_bound(double v) { return info_->has_upper = true, info_->upper = v, *this; }
  FieldEntry& set_range(double lo, double hi) { return set_lower_bound(lo).set_upper_bound(hi); }
  FieldEntry& describe(const std::string& doc) { return info_->doc = doc, *this; }
  /*! \brief Makes an integer field an enum: the text `name` stands for `value`. */
  FieldEntry& add_enum(const std::string& name, int64_t value) {
    static_assert(std::is_integral_v<Value> && !std::is_same_v<Value, bool>,
                  "add_enum is for integer fields");
    info_->type = kMXPParamEnum;
    info_->enum_values.emplace_back(name, value);
    // A default given before its enum names exist was written as a number: name it now.
    if (info_->has_default && info_->default_storage == std::to_string(value))
      info_->default_storage = info_->default_text = name;
    std::string text = "{";
    for (size_t i = 0; i < info_->enum_values.size(); ++i)
      text += (i ? ", '" : "'") + info_->enum_values[i].first + "'";
    info_->type_text = text + "}";
    return *this;
  }
  /*! \brief Makes an integer field a dtype: the NumPy names of MXNet's dtypes, as type flags. */
  FieldEntry& add_dtype_enum() {
    for (auto [name, flag] : {std::pair{"float32", kMXPFloat32}, std::pair{"float64", kMXPFloat64},
                              std::pair{"float16", kMXPFloat16}, std::pair{"uint8", kMXPUint8},
                              std::pair{"int8", kMXPInt8}, std::pair{"int32", kMXPInt32},
                              std::pair{"int64", kMXPInt64}, std::pair{"bool", kMXPBool}})
      add_enum(name, flag);
    return *this;
  }

 private:
  FieldInfo* info_;
};

/*! \brief Collects field declarations; member offsets are taken against a scratch instance. */
class ParamDeclarer {
 public:
  explicit ParamDeclarer(const void* base) : base_(static_cast<const char*>(base)) {}

  template <typename F>
  FieldEntry<F> Field(const char* name, F& ref) {
    using V = typename FieldEntry<F>::Value;
    fields_.emplace_back();
    FieldInfo& f = fields_.back();
    f.name = name;
    f.type = sdk::FieldKind<V>();
    f.type_text = sdk::FieldTypeText<V>();
    f.optional = sdk::IsOptional<F>::value;
    if (f.optional) f.type_text += " or None";
    f.offset = static_cast<size_t>(reinterpret_cast<const char*>(&ref) - base_);
    f.parse = &sdk::ParseField<F>;
    f.as_number = &sdk::FieldAsNumber<F>;
    return FieldEntry<F>(&f);
  }

  std::vector<FieldInfo> Take() { return std::vector<FieldInfo>(fields_.begin(), fields_.end()); }

 private:
  const char* base_;
  std::deque<FieldInfo> fields_;  // stable addresses while FieldEntry builders hold them
};

/*! \brief Base of a parameter struct P, which declares its fields with MXPLUG_DECLARE_PARAMETER. */
template <typename P>
struct Parameter {
  /*! \brief The declared fields, in declaration order (MXNet's __FIELDS__). */
  static const std::vector<FieldInfo>& Fields() {
    static const std::vector<FieldInfo> fields = [] {
      P scratch{};
      ParamDeclarer declarer(&scratch);
      scratch.DeclareFields(declarer);
      std::vector<FieldInfo> declared = declarer.Take();
      char* base = reinterpret_cast<char*>(&scratch);
      for (size_t i = 0; i < declared.size(); ++i) {
        const FieldInfo& f = declared[i];
        for (size_t j = 0; j < i; ++j)
          if (declared[j].name == f.name)
            throw std::logic_error("field '" + f.name + "' is declared twice");
        if (f.has_default && !f.parse(f, base + f.offset, f.default_storage))
          throw std::logic_error("the default of field '" + f.name + "' (" + f.default_storage +
                                 ") is not " + f.Expected());
      }
      return declared;
    }();
    return fields;
  }

  /*!
   * \brief Sets defaults, then parses kwargs into the fields. Keys of the form "__name__" are
   * MXNet attributes, not parameters, and are skipped.
   * \throws ParamError naming `op`, the field, the value and what is allowed.
   */
  void Init(const KwArgs& kwargs, const std::string& op = "") {
    const std::vector<FieldInfo>& fields = Fields();
    const std::string prefix = op.empty() ? "" : op + ": ";
    char* self = reinterpret_cast<char*>(static_cast<P*>(this));
    std::vector<bool> seen(fields.size(), false);
    for (const FieldInfo& f : fields)
      if (f.has_default) f.assign_default(f, self + f.offset);
    for (const auto& [key, value] : kwargs) {
      if (key.size() > 4 && key.rfind("__", 0) == 0 && key.compare(key.size() - 2, 2, "__") == 0)
        continue;
      size_t i = 0;
      while (i < fields.size() && fields[i].name != key) ++i;
      if (i == fields.size()) {
        std::string names;
        for (const FieldInfo& f : fields) names += (names.empty() ? "" : ", ") + f.name;
        throw ParamError(prefix + "unknown parameter '" + key + "'; valid parameters are " +
                         (names.empty() ? "none" : names));
      }
      const FieldInfo& f = fields[i];
      void* field = self + f.offset;
      if (!f.parse(f, field, value))
        throw ParamError(prefix + "invalid value '" + value + "' for parameter '" + key +
                         "': expected " + f.Expected());
      double number = 0;
      if ((f.has_lower || f.has_upper) && f.as_number(field, &number) &&
          ((f.has_lower && number < f.lower) || (f.has_upper && number > f.upper)))
        throw ParamError(prefix + "parameter '" + key + "' = " + sdk::Trim(value) +
                         " is out of range: expected " + f.Expected());
      seen[i] = true;
    }
    for (size_t i = 0; i < fields.size(); ++i)
      if (!seen[i] && !fields[i].has_default)
        throw ParamError(prefix + "required parameter '" + fields[i].name +
                         "' is missing: expected " + fields[i].Expected());
  }
};

}  // namespace mxplug

/*! \brief Opens the field declarations of parameter struct P (a member function). */
#define MXPLUG_DECLARE_PARAMETER(P) \
  void DeclareFields([[maybe_unused]] ::mxplug::ParamDeclarer& mxplug_declarer_)
/*! \brief Declares member `field` inside MXPLUG_DECLARE_PARAMETER; chain set_default, describe...
 */
#define MXPLUG_DECLARE_FIELD(field) mxplug_declarer_.Field(#field, this->field)

#endif  // MXPLUG_SDK_PARAMETER_HPP_
