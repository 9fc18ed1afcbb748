/*!
 * \file mxplug/error.h
 * \brief The one exception type of the core. Its message names the op, argument, file, plugin or
 * device involved and what was expected.
 */
#ifndef MXPLUG_ERROR_H_
#define MXPLUG_ERROR_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "mxplug/abi/status.h"

namespace mxplug {

/*!
 * \brief Text fit to show a person: control characters (ESC, BEL, the C1 controls...) and bytes
 * that are not UTF-8 written as \xNN, newlines and tabs kept. Names, docs and reasons come from
 * plugins and files, and must not drive the terminal (an escape sequence in a plugin's name
 * could rewrite what `mxplug plugins` shows) nor fail to become a Python string.
 */
std::string PrintableText(std::string_view text);

class Error : public std::runtime_error {
 public:
  /*! \brief The message is kept as PrintableText. */
  explicit Error(const std::string& message, int32_t code = kMXPUnknown)
      : std::runtime_error(PrintableText(message)), code_(code) {}
  /*! \brief The MXPStatusCode this error carries across the ABI. */
  int32_t code() const { return code_; }

 private:
  int32_t code_;
};

/*!
 * \brief Turns a status returned by a plugin into an Error, freeing the status.
 * \param context prefixed to the plugin's message, e.g. "FullyConnected forward on cpu(0)".
 */
void ThrowIfError(MXPStatus* status, const std::string& context);
/*!
 * \brief ThrowIfError with the context made only on failure: `context()` returns the string.
 * For calls on a hot path, where building the message every time would cost more than the call.
 */
template <typename MakeContext, typename = decltype(std::string(std::declval<MakeContext&>()()))>
void ThrowIfError(MXPStatus* status, MakeContext&& context) {
  if (status) ThrowIfError(status, std::string(context()));
}

}  // namespace mxplug

#endif  // MXPLUG_ERROR_H_
