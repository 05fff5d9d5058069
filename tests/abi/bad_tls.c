/* A library with thread-local data, for the check that builtin plugins have none. */
_Thread_local int schedhost_abi_test_tls_counter;

int schedhost_abi_test_tls_bump(void) { return ++schedhost_abi_test_tls_counter; }
