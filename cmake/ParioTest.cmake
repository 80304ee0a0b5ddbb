# Test helpers.
#
# pario_mpi_test(NAME n SOURCES s... [NP 1 2 4] [LINK pario] [ARGS a...] [MPI_API])
#   Builds an executable and registers one test per rank count, named n.npN.
#   With MPI_API the program uses only the MPI API, so it is registered twice
#   per rank count: n.system.npN runs on the system's MPI-IO (the oracle) and
#   n.pario.npN runs the same binary with libpario-mpiio preloaded.
#
# Open MPI runs oversubscribed (more ranks than cores) and as root in CI.
set(PARIO_TEST_TIMEOUT 300 CACHE STRING "seconds per test")

# What LD_PRELOAD holds to run a program on the drop-in. In a sanitizer build
# the sanitizer runtime has to come first in the list of libraries.
set(PARIO_PRELOAD_RUNTIME "")
if(PARIO_SANITIZE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(PARIO_PRELOAD_RUNTIME "${asan_runtime}:")
endif()
set(PARIO_PRELOAD "${PARIO_PRELOAD_RUNTIME}$<TARGET_FILE:pario-mpiio>")

function(pario_mpiexec_prefix out np preload)
  if(PARIO_MPI STREQUAL "mpich")
    set(cmd ${MPIEXEC_EXECUTABLE} -n ${np})
    if(preload)
      list(APPEND cmd -genv LD_PRELOAD ${PARIO_PRELOAD})
    endif()
  else()
    set(cmd ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root --mca btl self,vader
            -n ${np})
    if(preload)
      list(APPEND cmd -x LD_PRELOAD=${PARIO_PRELOAD})
    else()
      list(APPEND cmd --mca io ompio)
    endif()
  endif()
  set(${out} ${cmd} PARENT_SCOPE)
endfunction()

function(pario_mpi_test)
  cmake_parse_arguments(T "MPI_API" "NAME" "SOURCES;NP;LINK;ARGS;LABELS" ${ARGN})
  if(NOT T_NP)
    set(T_NP 1 2 4)
  endif()
  if(PARIO_MPI STREQUAL "mpich")
    # MPICH busy-polls: more ranks than cores makes every barrier slow.
    list(FILTER T_NP EXCLUDE REGEX "^([3-9]|[1-9][0-9]+)$")
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_include_directories(${T_NAME} PRIVATE ${CMAKE_SOURCE_DIR}/tests/common)
  target_link_libraries(${T_NAME} PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS} ${T_LINK})
  if(T_MPI_API)
    set(variants system pario)
  else()
    set(variants "")
  endif()
  foreach(np ${T_NP})
    if(T_MPI_API)
      foreach(v system pario)
        if(v STREQUAL "pario")
          pario_mpiexec_prefix(prefix ${np} ON)
        else()
          pario_mpiexec_prefix(prefix ${np} OFF)
        endif()
        set(tname ${T_NAME}.${v}.np${np})
        add_test(NAME ${tname} COMMAND ${prefix} $<TARGET_FILE:${T_NAME}> ${T_ARGS})
        set_tests_properties(${tname} PROPERTIES TIMEOUT ${PARIO_TEST_TIMEOUT}
                             LABELS "${v};${T_LABELS}"
                             ENVIRONMENT "PARIO_TEST_DIR=${CMAKE_BINARY_DIR}/testdata/${tname}")
      endforeach()
    else()
      pario_mpiexec_prefix(prefix ${np} OFF)
      set(tname ${T_NAME}.np${np})
      add_test(NAME ${tname} COMMAND ${prefix} $<TARGET_FILE:${T_NAME}> ${T_ARGS})
      set_tests_properties(${tname} PROPERTIES TIMEOUT ${PARIO_TEST_TIMEOUT}
                           LABELS "${T_LABELS}"
                           ENVIRONMENT "PARIO_TEST_DIR=${CMAKE_BINARY_DIR}/testdata/${tname}")
    endif()
  endforeach()
endfunction()

# pario_unclosed_test(NAME n PROGRAM target NP np ENDING finalize|kill
#                     BACKEND pario|system [PRELOAD] [REOPEN] [DELAY ms] [SLEEP ms])
#   Registers n: tests/common/run_unclosed.py runs the program (which writes
#   a file with collective writes and ends without closing it: MPI_Finalize,
#   or SIGKILL of every rank) and checks the file byte for byte. PRELOAD: a
#   program on the MPI API runs on pario's drop-in. REOPEN: it writes and
#   closes another file first. DELAY: the hint pario_cb_write_behind_delay;
#   SLEEP: ms between the writes and SIGKILL.
#   Not registered beyond 2 ranks under MPICH (it busy-polls).
function(pario_unclosed_test)
  cmake_parse_arguments(U "PRELOAD;REOPEN" "NAME;PROGRAM;NP;ENDING;BACKEND;DELAY;SLEEP" "" ${ARGN})
  if(PARIO_MPI STREQUAL "mpich" AND U_NP GREATER 2)
    return()
  endif()
  set(cmd /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/common/run_unclosed.py
          --mpiexec ${MPIEXEC_EXECUTABLE} --mpi ${PARIO_MPI} --np ${U_NP}
          --backend ${U_BACKEND} --ending ${U_ENDING}
          --workdir ${CMAKE_BINARY_DIR}/testdata/${U_NAME})
  if(U_PRELOAD)
    list(APPEND cmd --preload ${PARIO_PRELOAD})
  endif()
  if(U_REOPEN)
    list(APPEND cmd --reopen)
  endif()
  if(U_DELAY)
    list(APPEND cmd --delay ${U_DELAY})
  endif()
  if(U_SLEEP)
    list(APPEND cmd --sleep ${U_SLEEP})
  endif()
  add_test(NAME ${U_NAME} COMMAND ${cmd} -- $<TARGET_FILE:${U_PROGRAM}>)
  set_tests_properties(${U_NAME} PROPERTIES LABELS "${U_BACKEND};unclosed"
                       TIMEOUT ${PARIO_TEST_TIMEOUT})
endfunction()

# pario_nodes_test(NAME n SOURCES s... LABEL l [NP ...] [NODE1_NP ...] [NODE2_NP ...]
#                  [LINK ...] [ARGS ...])
#   pario_mpi_test, plus runs with PARIO_NODE_SIZE=1 (every rank its own node:
#   the paths between nodes) and PARIO_NODE_SIZE=2 (both kinds in one run),
#   named n.node1.npN and n.node2.npN.
function(pario_nodes_test)
  cmake_parse_arguments(G "" "NAME;LABEL" "SOURCES;NP;NODE1_NP;NODE2_NP;LINK;ARGS" ${ARGN})
  pario_mpi_test(NAME ${G_NAME} SOURCES ${G_SOURCES} NP ${G_NP} LINK ${G_LINK} ARGS ${G_ARGS}
                 LABELS ${G_LABEL})
  foreach(k 1 2)
    foreach(np ${G_NODE${k}_NP})
      if(PARIO_MPI STREQUAL "mpich" AND np GREATER 2)
        continue()
      endif()
      pario_mpiexec_prefix(prefix ${np} OFF)
      set(tname ${G_NAME}.node${k}.np${np})
      add_test(NAME ${tname} COMMAND ${prefix} $<TARGET_FILE:${G_NAME}> ${G_ARGS})
      set_tests_properties(${tname} PROPERTIES TIMEOUT ${PARIO_TEST_TIMEOUT} LABELS "${G_LABEL}"
        ENVIRONMENT "PARIO_TEST_DIR=${CMAKE_BINARY_DIR}/testdata/${tname};PARIO_NODE_SIZE=${k}")
    endforeach()
  endforeach()
endfunction()
