# Builds folsom with every optional dependency off (c-ares, zstd, LZ4, zlib, nlohmann-json):
# only Asio and OpenSSL, as a user without those -dev packages would. Configures BINARY_DIR
# (kept between runs: a second run rebuilds only what changed), builds the library and the
# tests of the built_without_* errors, runs them, and checks that nothing links an optional
# library. -O0: nothing here is measured, and the whole library is compiled once more.
set(tests unit_optional_features_test unit_error_test)
string(REPLACE ";" "|" only "^(${tests})$")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
                        -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug
                        "-DCMAKE_CXX_FLAGS_DEBUG=-O0"
                        -DFOLSOM_WITH_C_ARES=OFF -DFOLSOM_WITH_ZSTD=OFF -DFOLSOM_WITH_LZ4=OFF
                        -DFOLSOM_WITH_ZLIB=OFF -DFOLSOM_WITH_NLOHMANN_JSON=OFF
                        -DFOLSOM_BUILD_TOOLS=OFF -DFOLSOM_BUILD_BENCH=OFF
                        -DFOLSOM_BUILD_EXAMPLES=OFF -DFOLSOM_BUILD_DOCS=OFF
                        -DFOLSOM_BUILD_PYTHON=OFF -DFOLSOM_BUILD_LIBMEMCACHED_COMPAT=OFF
                        "-DFOLSOM_TEST_ONLY=${only}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the minimal build failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --parallel 2 --target ${tests} folsom
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the minimal configuration failed: ${rc}")
endif()
foreach(t ${tests})
  execute_process(COMMAND ${BINARY_DIR}/tests/${t} --gtest_brief=1 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${t} failed in the minimal build: ${rc}")
  endif()
  execute_process(COMMAND readelf -d ${BINARY_DIR}/tests/${t} OUTPUT_VARIABLE needed)
  if(needed MATCHES "libcares|libzstd|liblz4|libz\\.so")
    message(FATAL_ERROR "${t} links an optional library in the minimal build:\n${needed}")
  endif()
endforeach()
file(READ ${BINARY_DIR}/generated/include/folsom/config.hpp config)
if(NOT config MATCHES "FOLSOM_HAVE_C_ARES 0")
  message(FATAL_ERROR "the minimal build's folsom/config.hpp claims c-ares")
endif()
message(STATUS "minimal build (Asio and OpenSSL only): ${tests} passed")
