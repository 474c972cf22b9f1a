<?php
// The php-memcached side of consumer_faults.py: stores a key on HOST:PORT, prints READY, waits
// for a line on stdin (the driver breaks the server meanwhile), then gets the key and prints
// "<libmemcached return code> <milliseconds the get took>".
[$_, $port, $timeout_ms] = $argv;
$m = new Memcached();
$m->setOption(Memcached::OPT_CONNECT_TIMEOUT, (int)$timeout_ms);
$m->setOption(Memcached::OPT_POLL_TIMEOUT, (int)$timeout_ms);
$m->setOption(Memcached::OPT_RETRY_TIMEOUT, 0);
$m->addServer('127.0.0.1', (int)$port);
$stored = $m->set('fault:key', 'v');
echo ($stored ? "READY" : "NOTREADY " . $m->getResultCode()) . "\n";
fgets(STDIN);
$t0 = hrtime(true);
$m->get('fault:key');
$rc = $m->getResultCode();
printf("%d %d\n", $rc, (hrtime(true) - $t0) / 1e6);
