# The parsers of untrusted files (safetensors, tokenizer.json and its configs, chat templates and
# their Jinja interpreter, audio files, voice files): sources that need no libtorch, which the
# sanitizer replays (sanitized_parsers.cmake) and the libFuzzer build (IZWI_FUZZ) compile apart
# from the engine, and the fuzz targets that need nothing else.
set(izwi_parsers_src ${PROJECT_SOURCE_DIR}/src)
file(GLOB izwi_parser_sources ${izwi_parsers_src}/tokenizer/*.cpp ${izwi_parsers_src}/template/*.cpp)
list(APPEND izwi_parser_sources
     ${izwi_parsers_src}/common/base64.cpp ${izwi_parsers_src}/common/errors.cpp
     ${izwi_parsers_src}/common/json_fields.cpp ${izwi_parsers_src}/common/logging.cpp
     ${izwi_parsers_src}/common/regular_file.cpp
     ${izwi_parsers_src}/io/safetensors.cpp ${izwi_parsers_src}/io/mapped_file.cpp
     ${izwi_parsers_src}/audio/audio_file.cpp ${izwi_parsers_src}/audio/mono.cpp
     ${izwi_parsers_src}/audio/sample_checks.cpp ${izwi_parsers_src}/audio/streaming_resampler.cpp
     ${izwi_parsers_src}/audio/wav_writer.cpp
     ${izwi_parsers_src}/engine/voice_file.cpp)
set(izwi_parser_libraries spdlog::spdlog fmt::fmt nlohmann_json::nlohmann_json PkgConfig::PCRE2 PkgConfig::UTF8PROC
    PkgConfig::SNDFILE PkgConfig::SOXR ${CMAKE_DL_LIBS})  # tokenizer.model: libizwi_sentencepiece is dlopened
set(izwi_parser_fuzz_targets safetensors tokenizer_json tokenizer_encode tokenizer_config generation_config
    chat_template jinja_template audio_reader voice_file cli_args)

# izwi_parsers_library(NAME OPTIONS...): those sources as a static library compiled with OPTIONS.
function(izwi_parsers_library name)
  add_library(${name} STATIC ${izwi_parser_sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include ${izwi_parsers_src})
  if(ARGN)
    target_compile_options(${name} PUBLIC ${ARGN})
  endif()
  target_link_libraries(${name} PUBLIC ${izwi_parser_libraries})
endfunction()
