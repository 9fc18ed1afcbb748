/* A shared library that is not an mxplug plugin: it exports no mxplug_init. */
__attribute__((visibility("default"))) int not_a_plugin(void) { return 42; }
