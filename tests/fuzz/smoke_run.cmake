# One bounded run of a fuzz target, for ctest (tests/fuzz/CMakeLists.txt): every input of the
# checked-in corpus, then SECONDS of new inputs. New inputs and any crash go to WORK, never to
# the corpus. Fails when libFuzzer reports a crash, a leak, a timeout or a sanitizer finding.
# Usage: cmake -DFUZZER=... -DCORPUS=... -DWORK=... -DSECONDS=... -P smoke_run.cmake

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048
          -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/
          ${WORK}/corpus ${CORPUS}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${status}); the input is in ${WORK}/artifacts")
endif()
