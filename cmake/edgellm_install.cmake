# `cmake --install build --prefix DIR` installs the C API for apps to build
# against (the CLI's own install rule is in CMakeLists.txt):
#   DIR/include/edgellm/edgellm.h
#   DIR/lib/libedgellm.so.<version> (+ .so.<API version>, .so links), libedgellm.a
#   DIR/lib/cmake/edgellm/edgellmConfig.cmake (+ ConfigVersion): find_package(edgellm)
#     gives edgellm::edgellm (shared) and edgellm::edgellm_static
#   DIR/lib/pkgconfig/edgellm.pc: pkg-config --cflags --libs edgellm
# Both files locate the install from where they lie, so the tree can move.
include(CMakePackageConfigHelpers)

install(FILES ${CMAKE_SOURCE_DIR}/include/edgellm/edgellm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/edgellm)
install(TARGETS edgellm_shared edgellm
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

if(APPLE)
  set(EDGELLM_SHARED_FILE "libedgellm.${PROJECT_VERSION}.dylib")
  set(EDGELLM_SHARED_SONAME "@rpath/libedgellm.${EDGELLM_API_VERSION}.dylib")
else()
  set(EDGELLM_SHARED_FILE "libedgellm.so.${PROJECT_VERSION}")
  set(EDGELLM_SHARED_SONAME "libedgellm.so.${EDGELLM_API_VERSION}")
endif()

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/edgellm)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/edgellmConfig.cmake.in
  ${CMAKE_BINARY_DIR}/edgellmConfig.cmake INSTALL_DESTINATION ${config_dir}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
# The API version is the package's major version: find_package(edgellm 0.1)
# accepts any 0.x at or above 0.1.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/edgellmConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/edgellmConfig.cmake ${CMAKE_BINARY_DIR}/edgellmConfigVersion.cmake
        DESTINATION ${config_dir})

configure_file(${CMAKE_SOURCE_DIR}/cmake/edgellm.pc.in ${CMAKE_BINARY_DIR}/edgellm.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/edgellm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
