<?php
// One measurement of php-memcached on whichever libmemcached.so.11 the loader gives this
// process (bench/dropin/run_dropin_bench.py runs it on Debian's library and on the drop-in).
// Usage: php php_ops.php PORT OP CALLS; prints "OP <client CPU microseconds per call>".
// The client's CPU time (getrusage: user + system) is taken around the loop only.
[$_, $port, $op, $calls] = $argv;
$calls = (int)$calls;
$m = new Memcached();
$m->addServer('127.0.0.1', (int)$port);
$value = str_repeat('v', 100);
$keys = [];
$items = [];
for ($i = 0; $i < 100; $i++) {
    $keys[] = "bench:php:$i";
    $items["bench:php:$i"] = $value;
}
if (!$m->setMulti($items)) {
    fwrite(STDERR, "setMulti failed: " . $m->getResultMessage() . "\n");
    exit(1);
}
function cpu_us() {
    $r = getrusage();
    return $r['ru_utime.tv_sec'] * 1e6 + $r['ru_utime.tv_usec'] +
           $r['ru_stime.tv_sec'] * 1e6 + $r['ru_stime.tv_usec'];
}
$ok = true;
$t0 = cpu_us();
switch ($op) {
case 'get':
    for ($i = 0; $i < $calls; $i++) { $ok = $m->get('bench:php:7') === $value && $ok; }
    break;
case 'set':
    for ($i = 0; $i < $calls; $i++) { $ok = $m->set('bench:php:7', $value) && $ok; }
    break;
case 'getMulti':
    for ($i = 0; $i < $calls; $i++) { $ok = count($m->getMulti($keys)) === 100 && $ok; }
    break;
case 'setMulti':
    for ($i = 0; $i < $calls; $i++) { $ok = $m->setMulti($items) && $ok; }
    break;
default:
    fwrite(STDERR, "unknown op $op\n");
    exit(2);
}
$t1 = cpu_us();
if (!$ok) {
    fwrite(STDERR, "$op: a call failed: " . $m->getResultMessage() . "\n");
    exit(1);
}
printf("%s %.3f\n", $op, ($t1 - $t0) / $calls);
