// What a call throws, for tests that check error messages.
#ifndef MXPLUG_TESTS_TEST_ERRORS_H_
#define MXPLUG_TESTS_TEST_ERRORS_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

#include "mxplug/error.h"

namespace mxplug::test {

/*!
 * \brief The message of what `f` throws ("int N" for a thrown int), or "no error". With `code`,
 * an Error's status code is stored there.
 */
inline std::string ErrorText(const std::function<void()>& f, int32_t* code = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  } catch (int i) {
    return "int " + std::to_string(i);
  }
  return "no error";
}

}  // namespace mxplug::test

#endif  // MXPLUG_TESTS_TEST_ERRORS_H_
