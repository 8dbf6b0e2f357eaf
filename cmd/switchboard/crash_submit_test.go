package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// crashLoad submits messages to a serve process that the test kills and restarts under it, as
// a careful client does: each submission keeps its one idempotency key and is sent again until
// it gets its 202.
type crashLoad struct {
	client     *http.Client
	api, token string
	keyPrefix  string // the idempotency key of submission i is keyPrefix + i
	body       []byte
}

// submit sends submission i until it is accepted (a 503 or a broken connection is tried again
// for two minutes) and returns its message id.
func (c crashLoad) submit(i int) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("POST", c.api+"/v1/messages", bytes.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Idempotency-Key", fmt.Sprint(c.keyPrefix, i))
		if resp, err := c.client.Do(req); err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 202 {
				var a struct{ ID string }
				_ = json.Unmarshal(raw, &a)
				return a.ID, nil
			}
			if resp.StatusCode != 503 {
				return "", fmt.Errorf("submission %d: %d %s", i, resp.StatusCode, raw)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("submission %d never accepted", i)
}

// start submits total messages from workers goroutines. accepted counts the 202s so far; wait
// returns once every submission ended, with the message ids by submission, and fails the test
// for a submission that was never accepted.
func (c crashLoad) start(total, workers int) (accepted *atomic.Int64, wait func(t *testing.T) []string) {
	ids := make([]string, total)
	accepted = &atomic.Int64{}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, total)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				id, err := c.submit(i)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
				accepted.Add(1)
			}
		})
	}
	return accepted, func(t *testing.T) []string {
		t.Helper()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		return ids
	}
}
