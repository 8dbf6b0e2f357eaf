package runtime

import (
	"reflect"
	"testing"
)

func TestPeerInboxMembers(t *testing.T) {
	t.Parallel()
	const (
		alice = "12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo"
		bob   = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"
	)
	defaults := InboxQuota{MessagesPerMinute: DefaultInboxMessagesPerMinute, BytesPerDay: DefaultInboxBytesPerDay}
	cases := []struct {
		name    string
		lines   []string
		allowed []string // sorted
		anyPeer bool
		quota   InboxQuota
	}{
		{"defaults to the address book", []string{`    addressBook: {"` + bob + `": ["/ip4/198.51.100.5/tcp/4001"], "` + alice + `": ["/ip4/198.51.100.4/tcp/4001"]}`},
			[]string{bob, alice}, false, defaults},
		{"no address book allows no peer", nil, nil, false, defaults},
		{"any", []string{"    allowedPeers: any"}, nil, true, defaults},
		{"a list, with the address book beside it", []string{"    allowedPeers: [" + bob + ", " + alice + "]",
			`    addressBook: {"` + alice + `": ["/ip4/198.51.100.4/tcp/4001"]}`}, []string{bob, alice}, false, defaults},
		{"an empty list allows no peer", []string{"    allowedPeers: []",
			`    addressBook: {"` + alice + `": ["/ip4/198.51.100.4/tcp/4001"]}`}, nil, false, defaults},
		{"a quota", []string{"    inboxQuota: {messagesPerMinute: 5, bytesPerDay: 1048576}"}, nil, false,
			InboxQuota{MessagesPerMinute: 5, BytesPerDay: 1 << 20}},
		{"half a quota", []string{"    inboxQuota: {bytesPerDay: 1000}"}, nil, false,
			InboxQuota{MessagesPerMinute: DefaultInboxMessagesPerMinute, BytesPerDay: 1000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			rt, err := b.load(t, doc(map[string]string{"providers": withPeer(tc.lines...)}))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			p := rt.Providers["peers"].Peer
			if !reflect.DeepEqual(p.AllowedPeers, tc.allowed) || p.AnyPeer != tc.anyPeer || p.InboxQuota != tc.quota {
				t.Fatalf("allowedPeers %v, any %v, quota %+v; want %v, %v, %+v",
					p.AllowedPeers, p.AnyPeer, p.InboxQuota, tc.allowed, tc.anyPeer, tc.quota)
			}
		})
	}
}
