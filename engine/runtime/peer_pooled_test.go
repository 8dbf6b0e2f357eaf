package runtime

import (
	"strings"
	"testing"
	"time"
)

func TestPeerPooledMembers(t *testing.T) {
	t.Parallel()
	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		rt, err := setup(t).load(t, doc(map[string]string{"providers": withPeer()}))
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		p := rt.Providers["peers"].Peer
		want := PooledTiming{Keepalive: 10 * time.Second, IdleClose: 5 * time.Minute, RequestTimeout: 20 * time.Second}
		if p.PooledProtocol != "" || p.Pooled != want {
			t.Fatalf("pooledProtocol %q, timing %+v; want off, %+v", p.PooledProtocol, p.Pooled, want)
		}
		if rs := p.RelayService; rs.Enabled || rs.CircuitDuration != 30*time.Minute || rs.CircuitBytes != 100*(10<<20) {
			t.Fatalf("relay service %+v", rs)
		}
	})
	t.Run("set", func(t *testing.T) {
		t.Parallel()
		rt, err := setup(t).load(t, doc(map[string]string{"providers": withPeer(
			"    protocol: /dkg/10.0.1/message",
			"    pooledProtocol: /dkg/10.0.2/message",
			"    keepaliveSeconds: 5",
			"    idleCloseSeconds: 60",
			"    requestTimeoutSeconds: 30",
			"    relayService: {enabled: true, circuitSeconds: 7200, circuitBytes: 1073741824}")}))
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		p := rt.Providers["peers"].Peer
		want := PooledTiming{Keepalive: 5 * time.Second, IdleClose: time.Minute, RequestTimeout: 30 * time.Second}
		if p.PooledProtocol != "/dkg/10.0.2/message" || p.Pooled != want {
			t.Fatalf("pooledProtocol %q, timing %+v", p.PooledProtocol, p.Pooled)
		}
		if rs := p.RelayService; !rs.Enabled || rs.CircuitDuration != 2*time.Hour || rs.CircuitBytes != 1<<30 {
			t.Fatalf("relay service %+v", rs)
		}
	})
	for name, line := range map[string]string{
		"pooledProtocol":            "    pooledProtocol: /switchboard/1.0.0/message",
		"keepaliveSeconds":          "    keepaliveSeconds: 0",
		"relayService.circuitBytes": "    relayService: {enabled: true, circuitBytes: 10}",
	} {
		t.Run("refused "+name, func(t *testing.T) {
			t.Parallel()
			_, err := setup(t).load(t, doc(map[string]string{"providers": withPeer(line)}))
			if err == nil || !strings.Contains(err.Error(), "providers.peers."+name) {
				t.Fatalf("Load: %v, want a refusal of providers.peers.%s", err, name)
			}
		})
	}
}
