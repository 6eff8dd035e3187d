# The CI's sanitizer subset: the parsers of untrusted files (parser_sources.cmake) built a second
# time with ASan + UBSan, apart from libtorch (which they do not use), and every fuzz corpus of
# theirs replayed as a ctest (`asan.<name>.corpus`). The whole suite under ASan and the engine
# under TSan take hours on 2 cores and run from scripts/sanitize.sh (docs/testing.md); this subset
# takes minutes.
# The runtimes (libasan, libubsan) come with gcc (build-essential).
set(sanitize -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
izwi_parsers_library(izwi_parsers_asan -O1 -g ${sanitize})
target_link_options(izwi_parsers_asan PUBLIC ${sanitize})

foreach(target_name ${izwi_parser_fuzz_targets})
  add_executable(fuzz_${target_name}_asan ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${target_name}.cpp
                                          ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay_main.cpp)
  target_link_libraries(fuzz_${target_name}_asan PRIVATE izwi_parsers_asan)
  target_compile_definitions(fuzz_${target_name}_asan PRIVATE IZWI_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data")
  add_test(NAME asan.${target_name}.corpus
           COMMAND fuzz_${target_name}_asan ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${target_name})
  set_tests_properties(asan.${target_name}.corpus PROPERTIES ENVIRONMENT
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/scripts/lsan.supp")
endforeach()
