/* A plugin the host refuses (a future ABI major) whose static constructor leaves a trace: it
 * appends the pid it runs in to the file named by MXPLUG_TEST_CONSTRUCTOR_LOG. A probed load must
 * refuse it without opening it in the loading process, so no line may carry that process's pid. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "c_plugin.h"

__attribute__((constructor)) static void LogLoad(void) {
  const char* log = getenv("MXPLUG_TEST_CONSTRUCTOR_LOG");
  FILE* f = log ? fopen(log, "a") : NULL;
  if (!f) return;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  DescribeTestPlugin(out, "refused_with_constructor", 99, 0, 0, 0, &RegisterNothing);
  return 0;
}
