# Warning flags for the project's own targets (never forced on consumers).
function(folsom_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow)
  if(FOLSOM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
