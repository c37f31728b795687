# Python front-end (python/tpbsim over lib/libtpb.so): the pytest suite in
# tests/python (example ports against NumPy, JSON-vs-Python byte identity,
# error messages).  pytest comes from Debian's python3-pytest (scripts/setup).
# A missing pytest or an empty suite (pytest exit 5) fails the test.
set(TPB_PYTEST_ENV "TPBSIM_LIB=$<TARGET_FILE:tpb_shared>;PYTHONDONTWRITEBYTECODE=1")
if(TPB_SANITIZE)
  # the interpreter is not instrumented: preload the sanitizer runtime that
  # libtpb.so needs, and leave Python's own allocations out of leak checks
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(TPB_ASAN_RT libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
  else()
    set(TPB_ASAN_RT libasan.so)
  endif()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=${TPB_ASAN_RT}
                  OUTPUT_VARIABLE TPB_LIBASAN OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND TPB_PYTEST_ENV "LD_PRELOAD=${TPB_LIBASAN}" "ASAN_OPTIONS=detect_leaks=0")
endif()
add_test(NAME python_pytest
         COMMAND ${TPB_PYTHON3} -m pytest -q -p no:cacheprovider ${PROJECT_SOURCE_DIR}/tests/python
         WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
set_tests_properties(python_pytest PROPERTIES LABELS "python" ENVIRONMENT "${TPB_PYTEST_ENV}"
                     DEPENDS tpb_shared)
