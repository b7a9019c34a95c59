# Regenerates the audit sample capture and compares it byte for byte with
# the committed one (cmake -DGEN=... -DOUT=... -DREF=... -P check_audit_pcap.cmake).
execute_process(COMMAND ${GEN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen_audit_pcap failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${REF} RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${REF} differs from what gen_audit_pcap writes now; regenerate it: build/tools/gen_audit_pcap pcaps/audit_violations.pcap")
endif()
