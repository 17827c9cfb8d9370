# Passes when the PTX file(s) in PTX (a list) declare no kernel (.entry): see umbrella.cu.
foreach(file IN LISTS PTX)
  file(STRINGS "${file}" entries REGEX "\\.entry")
  if(entries)
    list(JOIN entries "\n" listed)
    message(FATAL_ERROR "${file}: including the headers compiles kernels that nothing calls:\n${listed}")
  endif()
  message(STATUS "${file}: no kernel")
endforeach()
