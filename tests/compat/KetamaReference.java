// Reference placements for tests/unit/continuum_test.cpp, computed the way the Java clients do
// it: Spotify Folsom's ring with Guava's own murmur3_32 and HostAndPort, spymemcached's with
// the JDK's MD5, InetSocketAddress.toString() and TreeMap. Run it with Debian's Guava:
//
//   javac -cp /usr/share/java/guava.jar -d /tmp KetamaReference.java
//   java -cp /usr/share/java/guava.jar:/tmp KetamaReference
//
// and paste what changed into the test. Pools and keys must match the test's.
import com.google.common.hash.HashCode;
import com.google.common.hash.Hashing;
import com.google.common.net.HostAndPort;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.TreeMap;

public final class KetamaReference {
    record Server(String host, int port, int weight) {}

    // com.spotify.folsom.ketama.Continuum: 100 chained murmur3_32 hashes per server.
    @SuppressWarnings("deprecation")  // Folsom uses murmur3_32(); over bytes it equals _fixed
    static TreeMap<Integer, Integer> folsomRing(Server[] servers) {
        TreeMap<Integer, Integer> ring = new TreeMap<>();
        for (int s = 0; s < servers.length; s++) {
            String address = HostAndPort.fromParts(servers[s].host, servers[s].port).toString();
            byte[] bytes = new byte[address.length()];
            for (int i = 0; i < bytes.length; i++) bytes[i] = (byte) address.charAt(i);
            for (int i = 0; i < 100; i++) {
                HashCode h = Hashing.murmur3_32().hashBytes(bytes);
                bytes = h.asBytes();
                ring.put(h.asInt(), s);
            }
        }
        return ring;
    }

    @SuppressWarnings("deprecation")
    static int folsomLookup(TreeMap<Integer, Integer> ring, String key) {
        int hash = Hashing.murmur3_32().hashBytes(key.getBytes(StandardCharsets.UTF_8)).asInt();
        Map.Entry<Integer, Integer> e = ring.ceilingEntry(hash);
        return (e == null ? ring.firstEntry() : e).getValue();
    }

    static byte[] md5(String s) throws Exception {
        return MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
    }

    static long word(byte[] d, int h) {
        return ((long) (d[3 + h * 4] & 0xFF) << 24) | ((long) (d[2 + h * 4] & 0xFF) << 16)
                | ((long) (d[1 + h * 4] & 0xFF) << 8) | (d[h * 4] & 0xFF);
    }

    // net.spy.memcached.KetamaNodeLocator, KETAMA_HASH, default (SPYMEMCACHED) node names;
    // weighted when given weights (any weight != 1 here), as with a non-empty weights map.
    static TreeMap<Long, Integer> spyRing(Server[] servers) throws Exception {
        TreeMap<Long, Integer> ring = new TreeMap<>();
        boolean weighted = false;
        int total = 0;
        for (Server s : servers) {
            weighted |= s.weight != 1;
            total += s.weight;
        }
        for (int s = 0; s < servers.length; s++) {
            InetSocketAddress address = new InetSocketAddress(
                    InetAddress.getByName(servers[s].host), servers[s].port);
            int digests = 40;
            if (weighted) {
                float percent = (float) servers[s].weight / (float) total;
                digests = (int) ((Math.floor((float) (percent * (float) 160 / 4
                        * (float) servers.length + 0.0000000001))) * 4) / 4;
            }
            for (int i = 0; i < digests; i++) {
                byte[] d = md5(String.valueOf(address) + "-" + i);
                for (int h = 0; h < 4; h++) ring.put(word(d, h), s);
            }
        }
        return ring;
    }

    static int spyLookup(TreeMap<Long, Integer> ring, String key) throws Exception {
        long hash = word(md5(key), 0);
        Map.Entry<Long, Integer> e = ring.ceilingEntry(hash);
        return (e == null ? ring.firstEntry() : e).getValue();
    }

    static final int KEYS = 1000;

    static String key(int i) {
        return "key:" + i;
    }

    static void print(String name, StringBuilder digits) {
        System.out.println(name + " =");
        for (int i = 0; i < digits.length(); i += 80) {
            System.out.println("    \"" + digits.substring(i, Math.min(i + 80, digits.length())) + "\"");
        }
    }

    public static void main(String[] args) throws Exception {
        for (String s : new String[] {"", "a", "ab", "abc", "abcd", "hello",
                 "The quick brown fox jumps over the lazy dog"}) {
            @SuppressWarnings("deprecation")
            int h = Hashing.murmur3_32().hashBytes(s.getBytes(StandardCharsets.UTF_8)).asInt();
            System.out.printf("murmur3_32(\"%s\") = 0x%08x%n", s, h);
        }

        Server[] folsomPool = {new Server("10.0.0.1", 11211, 1), new Server("10.0.0.2", 11212, 1),
            new Server("cache-c.example", 11211, 1), new Server("::1", 11213, 1),
            new Server("10.0.0.5", 22122, 1)};
        TreeMap<Integer, Integer> fr = folsomRing(folsomPool);
        System.out.printf("folsom points %d, first %d (server %d)%n", fr.size(), fr.firstKey(),
                fr.firstEntry().getValue());
        StringBuilder f = new StringBuilder();
        for (int i = 0; i < KEYS; i++) f.append(folsomLookup(fr, key(i)));
        print("folsom_pool", f);

        Server[] spyPool = {new Server("10.0.0.1", 11211, 1), new Server("10.0.0.2", 11212, 1),
            new Server("10.0.0.3", 11211, 1), new Server("10.0.0.4", 22122, 1)};
        TreeMap<Long, Integer> sr = spyRing(spyPool);
        System.out.printf("spy points %d%n", sr.size());
        StringBuilder sp = new StringBuilder();
        for (int i = 0; i < KEYS; i++) sp.append(spyLookup(sr, key(i)));
        print("spy_pool", sp);

        Server[] spyWeighted = {new Server("10.0.0.1", 11211, 1), new Server("10.0.0.2", 11211, 6),
            new Server("10.0.0.3", 11211, 6), new Server("10.0.0.4", 11211, 6),
            new Server("10.0.0.5", 11211, 6)};
        TreeMap<Long, Integer> sw = spyRing(spyWeighted);
        System.out.printf("spy weighted points %d%n", sw.size());
        StringBuilder spw = new StringBuilder();
        for (int i = 0; i < KEYS; i++) spw.append(spyLookup(sw, key(i)));
        print("spy_weighted_pool", spw);
    }
}
