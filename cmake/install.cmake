# Installs minimalloc into a prefix: the shared library (with its SONAME
# link), the static library, include/minimalloc.h, the CMake package and
# the pkg-config file.
#
#   cmake -DPREFIX=/usr/local -P cmake/install.cmake
#
# Builds the release library with cargo first, unless -DLIBDIR=<dir> names
# a directory that already holds libminimalloc.so and libminimalloc.a.
cmake_minimum_required(VERSION 3.16)

if(NOT DEFINED PREFIX)
  message(FATAL_ERROR "usage: cmake -DPREFIX=<dir> [-DLIBDIR=<dir>] -P cmake/install.cmake")
endif()
get_filename_component(ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
get_filename_component(PREFIX "${PREFIX}" ABSOLUTE)

if(NOT DEFINED LIBDIR)
  execute_process(COMMAND cargo build --release --lib
                  WORKING_DIRECTORY "${ROOT}" RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "cargo build --release --lib failed")
  endif()
  if(DEFINED ENV{CARGO_TARGET_DIR})
    set(LIBDIR "$ENV{CARGO_TARGET_DIR}/release")
  else()
    set(LIBDIR "${ROOT}/target/release")
  endif()
endif()
foreach(file libminimalloc.so libminimalloc.a)
  if(NOT EXISTS "${LIBDIR}/${file}")
    message(FATAL_ERROR "${LIBDIR}/${file} is missing")
  endif()
endforeach()

# Versions: the crate's from Cargo.toml, the ABI's from the header.
file(STRINGS "${ROOT}/Cargo.toml" version_line REGEX "^version = \"[0-9.]+\"" LIMIT_COUNT 1)
string(REGEX REPLACE "^version = \"([0-9.]+)\"" "\\1" VERSION "${version_line}")
string(REGEX REPLACE "^([0-9]+)\\..*" "\\1" VERSION_MAJOR "${VERSION}")
file(STRINGS "${ROOT}/include/minimalloc.h" abi_line REGEX "#define MINIMALLOC_ABI_VERSION")
string(REGEX REPLACE ".*MINIMALLOC_ABI_VERSION ([0-9]+).*" "\\1" ABI "${abi_line}")
set(SONAME "libminimalloc.so.${ABI}")

# The system libraries a static Rust library needs: ask rustc, on an empty
# crate (minimalloc itself links nothing more than the standard library).
set(scratch "${PREFIX}/.minimalloc-install")
file(MAKE_DIRECTORY "${scratch}")
file(WRITE "${scratch}/empty.rs" "")
execute_process(COMMAND rustc --crate-type staticlib --print native-static-libs
                        -o "${scratch}/empty.a" "${scratch}/empty.rs"
                ERROR_VARIABLE rustc_out OUTPUT_VARIABLE rustc_stdout RESULT_VARIABLE status)
file(REMOVE_RECURSE "${scratch}")
string(REGEX MATCH "native-static-libs: ([^\n]*)" _ "${rustc_out}${rustc_stdout}")
set(NATIVE_LIBS_FLAGS "${CMAKE_MATCH_1}")
if(NOT status EQUAL 0 OR NATIVE_LIBS_FLAGS STREQUAL "")
  message(FATAL_ERROR "rustc --print native-static-libs failed:\n${rustc_out}")
endif()
string(STRIP "${NATIVE_LIBS_FLAGS}" NATIVE_LIBS_FLAGS)
string(REPLACE "-l" "" NATIVE_LIBS "${NATIVE_LIBS_FLAGS}")
string(REPLACE " " ";" NATIVE_LIBS "${NATIVE_LIBS}")
set(POINTER_BYTES 8)
set(POINTER_BITS 64)

file(MAKE_DIRECTORY "${PREFIX}/lib" "${PREFIX}/include" "${PREFIX}/lib/cmake/minimalloc"
                    "${PREFIX}/lib/pkgconfig")
configure_file("${LIBDIR}/libminimalloc.so" "${PREFIX}/lib/${SONAME}" COPYONLY)
file(CREATE_LINK "${SONAME}" "${PREFIX}/lib/libminimalloc.so" SYMBOLIC)
configure_file("${LIBDIR}/libminimalloc.a" "${PREFIX}/lib/libminimalloc.a" COPYONLY)
configure_file("${ROOT}/include/minimalloc.h" "${PREFIX}/include/minimalloc.h" COPYONLY)
configure_file("${ROOT}/cmake/minimallocConfig.cmake.in"
               "${PREFIX}/lib/cmake/minimalloc/minimallocConfig.cmake" @ONLY)
configure_file("${ROOT}/cmake/minimallocConfigVersion.cmake.in"
               "${PREFIX}/lib/cmake/minimalloc/minimallocConfigVersion.cmake" @ONLY)
configure_file("${ROOT}/cmake/minimalloc.pc.in" "${PREFIX}/lib/pkgconfig/minimalloc.pc" @ONLY)
message(STATUS "installed minimalloc ${VERSION} (${SONAME}) into ${PREFIX}")
