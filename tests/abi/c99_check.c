/* The plugin ABI compiles as strict C99 (built with -std=c99 -pedantic-errors -Werror), and the
   struct-size macros work in C. */
#include "mxplug/plugin_abi.h"

typedef char check_struct_size_is_offset_of_end
    [MXP_STRUCT_SIZE(MXPExtension, next) == sizeof(MXPExtension) ? 1 : -1];

size_t mxplug_c99_check_plugin_api_size(void) { return MXP_STRUCT_SIZE(MXPPluginApi, register_all); }
