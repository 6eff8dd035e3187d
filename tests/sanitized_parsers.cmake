# The CI's sanitizer subset: the parsers of untrusted files (safetensors, tokenizer.json and its
# configs, chat templates and their Jinja interpreter, audio files, voice files) built a second time with ASan + UBSan, apart
# from libtorch (which they do not use), and every fuzz corpus of theirs replayed as a ctest
# (`asan.<name>.corpus`). The whole suite under ASan and the engine under TSan take hours on 2
# cores and run from scripts/sanitize.sh (docs/testing.md); this subset takes minutes.
# The runtimes (libasan, libubsan) come with gcc (build-essential).
set(sanitize -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
set(src ${PROJECT_SOURCE_DIR}/src)
file(GLOB tokenizer_sources ${src}/tokenizer/*.cpp)
file(GLOB template_sources ${src}/template/*.cpp)  # chat templates: the tokenizer renders them
add_library(izwi_parsers_asan STATIC
  ${tokenizer_sources} ${template_sources}
  ${src}/common/base64.cpp ${src}/common/errors.cpp ${src}/common/json_fields.cpp ${src}/common/logging.cpp
  ${src}/common/regular_file.cpp
  ${src}/io/safetensors.cpp ${src}/io/mapped_file.cpp
  ${src}/audio/audio_file.cpp ${src}/audio/mono.cpp ${src}/audio/sample_checks.cpp
  ${src}/audio/streaming_resampler.cpp ${src}/audio/wav_writer.cpp
  ${src}/engine/voice_file.cpp)
target_include_directories(izwi_parsers_asan PUBLIC ${PROJECT_SOURCE_DIR}/include ${src})
target_compile_options(izwi_parsers_asan PUBLIC -O1 -g ${sanitize})
target_link_options(izwi_parsers_asan PUBLIC ${sanitize})
target_link_libraries(izwi_parsers_asan PUBLIC spdlog::spdlog fmt::fmt nlohmann_json::nlohmann_json
                      PkgConfig::PCRE2 PkgConfig::UTF8PROC PkgConfig::SNDFILE PkgConfig::SOXR
                      ${CMAKE_DL_LIBS})  # tokenizer.model: libizwi_sentencepiece is dlopened

foreach(target_name safetensors tokenizer_json tokenizer_encode tokenizer_config generation_config chat_template
                    jinja_template audio_reader voice_file cli_args)
  add_executable(fuzz_${target_name}_asan ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${target_name}.cpp
                                          ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay_main.cpp)
  target_link_libraries(fuzz_${target_name}_asan PRIVATE izwi_parsers_asan)
  target_compile_definitions(fuzz_${target_name}_asan PRIVATE IZWI_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data")
  add_test(NAME asan.${target_name}.corpus
           COMMAND fuzz_${target_name}_asan ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${target_name})
  set_tests_properties(asan.${target_name}.corpus PROPERTIES ENVIRONMENT
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/scripts/lsan.supp")
endforeach()
