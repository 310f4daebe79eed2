#include "apps/edgellm/common.h"
#include "base/error.h"
namespace edgellm::cli {
int cmd_synth(int, char**) { fail("synth: coming in the next commit"); }
}  // namespace edgellm::cli
