# The shared library exports the public API and nothing else of izwi: every dynamic symbol in
# namespace izwi (functions, and the typeinfo / vtables of classes) must belong to a name the
# public headers mark IZWI_API. Internals leaking out would clash with a host program's symbols.
execute_process(COMMAND nm -DC --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
set(public "Engine|StreamHandle|TranscriptionStream|Tokenizer|IncrementalDetokenizer|Error|EngineConfig|WavWriter")
set(public "${public}|read_audio|read_audio_from_memory|to_mono|resample|load_audio_mono|write_wav|to_string")
set(public "${public}|save_voice|load_voice|describe_model_kind")
set(public "${public}|parse_tool_calls|ToolCallStreamParser|detect_tool_call_format|tool_call_markers")
set(public "${public}|tool_call_format_from_string|validate_structured_output")
string(REPLACE "\n" ";" lines "${symbols}")
set(exported 0)
set(leaked "")
foreach(line IN LISTS lines)
  # "<address> <type> <name>": only names in izwi (typeinfo, vtables and members included). A
  # function returning std::string carries an ABI tag after its name: "name[abi:cxx11](".
  if(NOT line MATCHES " [A-Za-z] ((typeinfo|typeinfo name|vtable|VTT) for )?izwi::")
    continue()
  endif()
  math(EXPR exported "${exported} + 1")
  if(NOT line MATCHES " [A-Za-z] ((typeinfo|typeinfo name|vtable|VTT) for )?izwi::(${public})[:(<[]"
     AND NOT line MATCHES " [A-Za-z] ((typeinfo|typeinfo name|vtable|VTT) for )?izwi::(${public})$")
    string(APPEND leaked "\n  ${line}")
  endif()
endforeach()
if(exported EQUAL 0)
  message(FATAL_ERROR "${LIBRARY} exports nothing of izwi")
endif()
if(leaked)
  message(FATAL_ERROR "${LIBRARY} exports internals:${leaked}")
endif()
message(STATUS "${exported} izwi symbols exported, all public API")
