// A working plugin that behaves badly towards the terminal: it prints a banner to stdout when
// loaded (which must not reach the CLI's --json output) and its name, version, vendor and op doc
// hold escape sequences and a byte that is not UTF-8 (which must not reach the terminal raw, nor
// stop `import mxplug`).
#include <cstdio>
#include <iostream>

#include "mxplug/plugin.hpp"
#include "same_shape_prop.h"

namespace {

struct Banner {
  Banner() {
    std::printf("noisy plugin says hello from printf\n");
    std::cout << "noisy plugin says hello from std::cout" << std::endl;
  }
} banner;

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY_AS(NoisyOp, "test.Noisy", test_plugins::SameShapeProp)
    .describe("Clears the screen \x1b[2J\x1b[31min red\x07, then a byte that is not UTF-8: \xff.");

MXPLUG_PLUGIN("noisy\x1b[1m", "1.0\x1b]0;title\x07", "tests\xff")
