# compat.consumers: scripts/compat-check runs the test suites of the programs built on
# libmemcached (php-memcached, pylibmc, the Perl modules, libmemcached-tools) against the drop-in
# this tree built (compat/libmemcached/) and against Debian's libmemcached, and fails on any
# test that passes with Debian's library only (docs/libmemcached-dropin.md). scripts/deps
# installs the consumers; their test sources are Debian's orig tarballs of the installed
# versions, fetched at test time from the machine's mirror (python/tests/foreign_sources.py,
# cached in ~/.cache/folsom). It exits 77, a skip, with the reason, when a consumer is not
# installed or its sources cannot be had (Debian's mirror lacks php-memcached 3.2.0's tarball:
# COMPAT_PHP_MEMCACHED_GIT may name a clone, else php-memcached 3.3.0's tests, which the mirror
# serves, run against the installed 3.2.0 extension on both libraries). Debian's results are kept in the build
# tree and reused while the script and the installed packages are unchanged (--reuse-debian:
# Debian's library does not change under a rebuild of this tree), so a run costs the drop-in's
# side only; a first run in a build tree measures both sides.
# Not in a sanitizer tree: a sanitized library cannot be loaded into php, python3 or perl.
# On by default; -DFOLSOM_COMPAT_CHECK=OFF (FOLSOM_COMPAT_CHECK=0 scripts/test) leaves it out.
option(FOLSOM_COMPAT_CHECK "Add compat.consumers: the consumers' own suites on the drop-in" ON)
if(FOLSOM_COMPAT_CHECK AND FOLSOM_BUILD_TESTS AND TARGET folsom_libmemcached AND NOT FOLSOM_SANITIZE
   AND (NOT FOLSOM_TEST_ONLY OR "compat_consumers" MATCHES "${FOLSOM_TEST_ONLY}"))
  add_test(NAME compat.consumers
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/compat-check
                   --lib-dir $<TARGET_FILE_DIR:folsom_libmemcached>
                   --work ${PROJECT_BINARY_DIR}/compat-check
                   --reuse-debian --test-timeout 20 --suite-timeout 240)
  set_tests_properties(compat.consumers PROPERTIES
    LABELS compat SKIP_RETURN_CODE 77 TIMEOUT 1200 COST 500)
endif()

# compat.check_self_test: the harness's verdict logic (TAP parsing, the per-test comparison,
# the loader proof, output normalisation) on fixed inputs; needs python3 only, seconds.
if(FOLSOM_BUILD_TESTS AND NOT FOLSOM_TEST_PREFIX
   AND (NOT FOLSOM_TEST_ONLY OR "compat_check_self_test" MATCHES "${FOLSOM_TEST_ONLY}"))
  add_test(NAME compat.check_self_test
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/compat-check --self-test)
  set_tests_properties(compat.check_self_test PROPERTIES LABELS compat TIMEOUT 60)
endif()

# compat.consumer_faults: php-memcached and pylibmc on Debian's libmemcached and on the drop-in
# with a server killed, closing mid-request, frozen (SIGSTOP) or answering garbage between a set
# and a get: the drop-in must give Debian's return code, within the poll timeout (plus slack
# for a loaded machine). Skipped (77) when neither consumer is installed; about 10 s.
if(FOLSOM_BUILD_TESTS AND TARGET folsom_libmemcached AND NOT FOLSOM_SANITIZE
   AND (NOT FOLSOM_TEST_ONLY OR "compat_consumer_faults" MATCHES "${FOLSOM_TEST_ONLY}"))
  add_test(NAME compat.consumer_faults
           COMMAND ${PROJECT_SOURCE_DIR}/tests/compat/libmemcached/faults/consumer_faults.py
                   --lib-dir $<TARGET_FILE_DIR:folsom_libmemcached>)
  set_tests_properties(compat.consumer_faults PROPERTIES
    LABELS compat SKIP_RETURN_CODE 77 TIMEOUT 180)
endif()
