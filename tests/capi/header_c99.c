/* The public header alone, compiled as strict C99 (-std=c99 -Wall -Wextra
 * -pedantic -Werror, tests/CMakeLists.txt and scripts/check-abi.sh): no C++,
 * no extension, no warning may reach an app that includes it. */
#include <edgellm/edgellm.h>

/* Every function's type, so a signature change is compiled here too. */
typedef struct {
  const char* (*version)(void);
  edgellm_status (*load)(const char*, const edgellm_model_options*, edgellm_model**);
  edgellm_status (*generate)(edgellm_context*, const edgellm_sampling*, edgellm_token_callback, void*,
                             edgellm_generate_result*);
} edgellm_header_check;

int edgellm_header_c99_compiles(void);
int edgellm_header_c99_compiles(void) {
  edgellm_header_check t;
  t.version = edgellm_version;
  t.load = edgellm_model_load;
  t.generate = edgellm_generate;
  return EDGELLM_API_VERSION + (t.version != 0) + (t.load != 0) + (t.generate != 0);
}
