# `cmake --install` puts the headers, the shared library and a CMake package in the prefix, so a
# consumer can `find_package(izwi)` and link `izwi::izwi`.
include(CMakePackageConfigHelpers)

install(TARGETS izwi EXPORT izwiTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/izwi DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT izwiTargets NAMESPACE izwi:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/izwi)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/izwiConfig.cmake.in
  ${PROJECT_BINARY_DIR}/izwiConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/izwi)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/izwiConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/izwiConfig.cmake ${PROJECT_BINARY_DIR}/izwiConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/izwi)
