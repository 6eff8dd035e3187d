# The API reference: Doxygen over the public headers (include/izwi/), `cmake --build build --target
# docs` writes build/docs/html/index.html. Doxyfile.in fails on any warning (an undocumented public
# declaration, a bad command), and the test docs.api_reference runs the same check in the suite.
find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "doxygen not found: no docs target (cmake/install_deps.sh installs it)")
  return()
endif()
set(IZWI_DOCS_OUTPUT_DIR ${PROJECT_BINARY_DIR}/docs)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${PROJECT_BINARY_DIR}/Doxyfile @ONLY)
file(GLOB izwi_public_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/izwi/*.h)
add_custom_target(docs
                  COMMAND Doxygen::doxygen ${PROJECT_BINARY_DIR}/Doxyfile
                  DEPENDS ${izwi_public_headers} ${PROJECT_BINARY_DIR}/Doxyfile
                  COMMENT "API reference from include/izwi/ (Doxygen)"
                  VERBATIM)
if(IZWI_BUILD_TESTS)
  add_test(NAME docs.api_reference COMMAND ${CMAKE_COMMAND} -E chdir ${PROJECT_BINARY_DIR} ${DOXYGEN_EXECUTABLE}
                                           ${PROJECT_BINARY_DIR}/Doxyfile)
endif()
