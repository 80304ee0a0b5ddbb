# `cmake --install BUILD [--prefix PREFIX]`: what users link against and run.
#
#   include/pario/*.h                      the public headers
#   lib/libpario.so.0.1.0 (soname .so.0)   the runtime; lib/libpario-mpiio.so.* the drop-in
#   lib/pkgconfig/pario.pc, pario-mpiio.pc pkg-config
#   lib/cmake/pario/                       find_package(pario): pario::pario, pario::pario-mpiio
#   bin/pario -> share/pario/tools/pario   the command, its Python modules beside it, and
#   share/pario/pario-install.conf         what it needs to know (MPI, mpiexec, libraries)
#   bin/pario-calibrate                    `pario calibrate`'s measuring program
#   share/doc/pario/                       README and docs/*.md
#
# The libraries carry an RPATH of $ORIGIN, so the drop-in finds libpario.so wherever the
# prefix is moved.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(pario pario-mpiio PROPERTIES
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                      INSTALL_RPATH "$ORIGIN")
install(TARGETS pario pario-mpiio EXPORT parioTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/pario DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# CMake package.
set(PARIO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pario)
install(EXPORT parioTargets NAMESPACE pario:: DESTINATION ${PARIO_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/parioConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/install/parioConfig.cmake
                              INSTALL_DESTINATION ${PARIO_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/parioConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/parioConfig.cmake
              ${CMAKE_BINARY_DIR}/install/parioConfigVersion.cmake
        DESTINATION ${PARIO_CMAKE_DIR})

# pkg-config: the MPI's own module supplies its flags.
if(PARIO_MPI STREQUAL "mpich")
  set(PARIO_PC_MPI mpich)
else()
  set(PARIO_PC_MPI ompi-c)
endif()
file(RELATIVE_PATH PARIO_PC_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" PARIO_PC_PREFIX "${PARIO_PC_PREFIX}")
foreach(pc pario pario-mpiio)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/install/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/install/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# The pario command: installed with its modules in share/pario/tools (it imports what sits
# beside it) and linked from bin; the install record tells it the MPI and the libraries.
set(PARIO_TOOLS_DIR ${CMAKE_INSTALL_DATADIR}/pario/tools)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/tools/pario.py DESTINATION ${PARIO_TOOLS_DIR} RENAME pario)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/tools/testbed.sh DESTINATION ${PARIO_TOOLS_DIR})
install(PROGRAMS ${CMAKE_SOURCE_DIR}/tools/hdf5-testpar.sh DESTINATION ${PARIO_TOOLS_DIR})
file(GLOB PARIO_INSTALL_MODULES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tools/pario_*.py)
install(FILES ${PARIO_INSTALL_MODULES} DESTINATION ${PARIO_TOOLS_DIR})
install(TARGETS pario-calibrate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
file(RELATIVE_PATH PARIO_RECORD_LIBDIR /p/${CMAKE_INSTALL_DATADIR}/pario
     /p/${CMAKE_INSTALL_LIBDIR})
file(RELATIVE_PATH PARIO_BIN_TO_TOOLS /p/${CMAKE_INSTALL_BINDIR} /p/${PARIO_TOOLS_DIR}/pario)
file(WRITE ${CMAKE_BINARY_DIR}/install/pario-install.conf
     "# Written by cmake --install: the build this pario was installed from.\n"
     "PARIO_MPI=${PARIO_MPI}\n"
     "MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}\n"
     "PARIO_LIBDIR=${PARIO_RECORD_LIBDIR}\n"
     "PARIO_VERSION=${PROJECT_VERSION}\n")
install(FILES ${CMAKE_BINARY_DIR}/install/pario-install.conf
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pario)
install(CODE "
  set(bindir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  file(MAKE_DIRECTORY \"\${bindir}\")
  file(REMOVE \"\${bindir}/pario\")
  file(CREATE_LINK \"${PARIO_BIN_TO_TOOLS}\" \"\${bindir}/pario\" SYMBOLIC)
  message(STATUS \"Installing: \${bindir}/pario -> ${PARIO_BIN_TO_TOOLS}\")
")

# Documentation.
file(GLOB PARIO_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${PARIO_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})
