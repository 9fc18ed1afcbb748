// The keyword arguments of a data iterator as MXNet passes them: text ("True", "(3, 28, 28)",
// "128"). Each Take* reads one argument (or its default) and errors name the iterator and the
// argument; IgnoreTheRest logs the arguments the iterator does not have, once each, and ignores
// them, as MXNet's iterators do (a script written for MXNet passes arguments of its other
// iterators, or of versions that had them).
#ifndef MXPLUG_IO_ITER_ARGS_H_
#define MXPLUG_IO_ITER_ARGS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mxplug/sdk/tshape.hpp"

namespace mxplug::io {

class IterArgs {
 public:
  IterArgs(std::string iter, std::map<std::string, std::string> kwargs)
      : iter_(std::move(iter)), kwargs_(std::move(kwargs)) {}

  const std::string& iter() const { return iter_; }
  std::string TakeString(const std::string& name, const std::string& fallback);
  /*! \brief A required string argument. */
  std::string TakeString(const std::string& name);
  int TakeInt(const std::string& name, int fallback, int min_value);
  /*! \brief A required int argument. */
  int TakeInt(const std::string& name, int min_value);
  float TakeFloat(const std::string& name, float fallback);
  /*! \brief An "int or None" / "float or None" argument: nullopt when absent or "None". */
  std::optional<int> TakeOptionalInt(const std::string& name, int min_value);
  std::optional<float> TakeOptionalFloat(const std::string& name);
  bool TakeBool(const std::string& name, bool fallback);
  TShape TakeShape(const std::string& name, const TShape& fallback);
  /*! \brief A tuple of numbers ("(0.1, 0.3)", "[0.5]" or "0.5"). */
  std::vector<float> TakeFloats(const std::string& name, const std::vector<float>& fallback);
  /*! \brief Takes and ignores arguments MXNet has that change nothing here (e.g. `silent`). */
  void Ignore(const std::vector<std::string>& names);
  /*! \brief Logs to stderr, once per iterator and argument in a process, each argument no Take*
   * read, naming the ones the iterator takes; then they are ignored. */
  void IgnoreTheRest() const;

 private:
  bool Find(const std::string& name, std::string* text);
  [[noreturn]] void Missing(const std::string& name) const;
  [[noreturn]] void Bad(const std::string& name, const std::string& text,
                        const std::string& expected) const;

  std::string iter_;
  std::map<std::string, std::string> kwargs_;
  std::vector<std::string> known_;
};

}  // namespace mxplug::io

#endif  // MXPLUG_IO_ITER_ARGS_H_
