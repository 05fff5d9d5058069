/* Shared by the bad test libraries: each one records in the environment if its static
 * constructor ever runs, so loader_test can prove the loader refused it before dlopen. */
#ifndef SCHEDHOST_TESTS_ABI_BAD_LIBS_H_
#define SCHEDHOST_TESTS_ABI_BAD_LIBS_H_

#include <stdlib.h>

#define SCHEDHOST_BAD_LIB_CONSTRUCTOR(lib)                                  \
  __attribute__((constructor)) static void schedhost_bad_lib_loaded(void) { \
    setenv("SCHEDHOST_ABI_TEST_CONSTRUCTOR_RAN", lib, 1);                   \
  }

#endif /* SCHEDHOST_TESTS_ABI_BAD_LIBS_H_ */
