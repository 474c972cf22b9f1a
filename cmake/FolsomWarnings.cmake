# Warning flags for the project's own targets (never forced on consumers).
function(folsom_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow)
  # GCC 12's -Wrestrict misfires inside libstdc++'s string concatenation at -O3 (GCC bug
  # 105651); it is a false positive, not a finding in our code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(FOLSOM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
