# libizwi holds no benchmark or test helper (bench_support/, linked by benchmarks and tests only).
# The full symbol table is read, hidden symbols included: they are hidden, so a leak would not show
# among the exported ones, only in the library's size and in what it links.
execute_process(COMMAND nm -C --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
if(NOT symbols MATCHES "izwi::Engine::")
  message(FATAL_ERROR "${LIBRARY} has no symbol table to check (stripped?)")
endif()
# One name per bench_support/ header.
set(helpers "write_random_checkpoint|checkpoint_preset|measure_fma_peak_gflops|measure_read_bandwidth_gbps")
set(helpers "${helpers}|sum_floats|RandomWeights|write_safetensors")
string(REGEX MATCHALL "[^\n]*izwi::(${helpers})[^\n]*" found "${symbols}")
if(found)
  string(REPLACE ";" "\n  " found "${found}")
  message(FATAL_ERROR "${LIBRARY} holds benchmark helpers:\n  ${found}")
endif()
message(STATUS "${LIBRARY} holds no bench_support helper")
