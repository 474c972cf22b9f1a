<?php
// An ordinary php-memcached script: one server, a set, a get, a getMulti. It knows nothing of
// TLS or routes; FOLSOM_LIBMEMCACHED_CONFIG gives it both. It prints which libmemcached the
// process mapped, so that the test can tell the drop-in ran it.
$m = new Memcached();
$m->addServer('127.0.0.1', (int)$argv[1]);
echo "set: ", $m->set('php-written', 'from-php') ? 'ok' : $m->getResultMessage(), "\n";
echo "get: ", var_export($m->get('php-written'), true), "\n";
echo "replicated: ", var_export($m->get('test-written'), true), "\n";
echo "multi: ", json_encode($m->getMulti(['php-written', 'test-written'])), "\n";
foreach (file('/proc/self/maps') as $line)
    if (strpos($line, 'libmemcached.so') !== false)
        echo "mapped: ", trim(substr($line, strrpos($line, ' ') + 1)), "\n";
