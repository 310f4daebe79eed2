# The shared library of the C API: libedgellm.so.<API version>, built from the
# same objects as the static libedgellm.a (CMakeLists.txt). Two fences keep
# its export table to edgellm_* alone, which scripts/check-abi.sh compares
# with capi/edgellm.symbols:
#   - every object is compiled with hidden visibility; edgellm.h marks the
#     API functions EDGELLM_API (visibility "default");
#   - a linker version script (capi/edgellm.map) makes everything else local,
#     including the C++ standard library's inline template instantiations,
#     which carry default visibility from libstdc++'s own headers.
file(STRINGS ${CMAKE_SOURCE_DIR}/include/edgellm/edgellm.h api_line REGEX "^#define EDGELLM_API_VERSION [0-9]+")
string(REGEX REPLACE ".* ([0-9]+)$" "\\1" EDGELLM_API_VERSION "${api_line}")
# The SONAME follows the header: raising the version reconfigures.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/edgellm/edgellm.h)

add_library(edgellm_shared SHARED $<TARGET_OBJECTS:edgellm_objects>)
set_target_properties(edgellm_shared PROPERTIES
  OUTPUT_NAME edgellm
  VERSION ${PROJECT_VERSION}
  SOVERSION ${EDGELLM_API_VERSION}
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/capi/edgellm.map)
target_link_options(edgellm_shared PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/capi/edgellm.map)
# Every dependency linked in (none left for the app to supply), checked in
# the plain builds: clang's sanitizer runtimes come with the executable.
if(NOT EDGELLM_SANITIZE AND NOT EDGELLM_FUZZ)
  target_link_options(edgellm_shared PRIVATE -Wl,--no-undefined)
endif()
target_link_libraries(edgellm_shared PRIVATE Threads::Threads PkgConfig::PCRE2)
# What links `edgellm` links this too (fuzz/: the sanitizer runtimes).
target_link_options(edgellm_shared PRIVATE $<TARGET_PROPERTY:edgellm,INTERFACE_LINK_OPTIONS>)
target_include_directories(edgellm_shared INTERFACE ${CMAKE_SOURCE_DIR}/include)

# edgellm_version() says which release it is.
set_property(SOURCE ${CMAKE_SOURCE_DIR}/capi/version.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  "EDGELLM_VERSION_STRING=\"${PROJECT_VERSION}\"")
