# cmake -DBIN=rdmapct -DFLAG=--man -DOUT=file -P run_to_file.cmake: runs
# `BIN help FLAG` with its standard output to OUT, failing the build step when
# it fails (the man page and bash completion come from the built rdmapct).
execute_process(COMMAND ${BIN} help ${FLAG} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${BIN} help ${FLAG} exited with ${rc}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
