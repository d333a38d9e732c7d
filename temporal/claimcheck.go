package agtemporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// DefaultClaimThreshold is the payload size above which ClaimCheck moves a
// payload out of workflow history: 256 KiB.
const DefaultClaimThreshold = 256 << 10

// claimEncoding marks a payload that holds a blob reference.
const claimEncoding = "agcore/claim-check"

// ErrBlobNotFound is returned by a BlobStore for a key it does not hold.
var ErrBlobNotFound = errors.New("agtemporal: blob not found")

// BlobStore keeps the payloads too large for workflow history. Keys are
// content hashes, so a Put of a key already held may do nothing.
type BlobStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// ClaimCheck is a converter.PayloadCodec that stores every payload larger
// than Threshold in Store and puts a reference (its SHA-256) in history
// instead: a long tool result or a long history then costs workflow
// history a few dozen bytes. Clients and workers must use the same store.
type ClaimCheck struct {
	Store     BlobStore
	Threshold int           // 0: DefaultClaimThreshold
	Timeout   time.Duration // of one blob store call; 0: 30s
}

// NewDataConverter returns Temporal's default data converter with c as its
// codec: pass it as client.Options.DataConverter.
func (c *ClaimCheck) NewDataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

func (c *ClaimCheck) ctx() (context.Context, context.CancelFunc) {
	d := c.Timeout
	if d <= 0 {
		d = 30 * time.Second
	}
	return context.WithTimeout(context.Background(), d)
}

// Encode implements converter.PayloadCodec.
func (c *ClaimCheck) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	limit := c.Threshold
	if limit <= 0 {
		limit = DefaultClaimThreshold
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if proto.Size(p) <= limit {
			out[i] = p
			continue
		}
		data, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("agtemporal: claim check: %w", err)
		}
		sum := sha256.Sum256(data)
		key := "sha256-" + hex.EncodeToString(sum[:])
		ctx, cancel := c.ctx()
		err = c.Store.Put(ctx, key, data)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("agtemporal: claim check: storing %s: %w", key, err)
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(claimEncoding)}, Data: []byte(key)}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec.
func (c *ClaimCheck) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != claimEncoding {
			out[i] = p
			continue
		}
		key := string(p.GetData())
		ctx, cancel := c.ctx()
		data, err := c.Store.Get(ctx, key)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("agtemporal: claim check: loading %s: %w", key, err)
		}
		sum := sha256.Sum256(data)
		if "sha256-"+hex.EncodeToString(sum[:]) != key {
			return nil, fmt.Errorf("agtemporal: claim check: blob %s does not match its hash", key)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(data, &orig); err != nil {
			return nil, fmt.Errorf("agtemporal: claim check: %s: %w", key, err)
		}
		out[i] = &orig
	}
	return out, nil
}

// FileBlobs keeps blobs as files in Dir (created on first Put).
type FileBlobs struct{ Dir string }

func (f FileBlobs) path(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, `/\.`) {
		return "", fmt.Errorf("agtemporal: bad blob key %q", key)
	}
	return filepath.Join(f.Dir, key), nil
}

// Put implements BlobStore; the file appears whole (written to a
// temporary name, then renamed).
func (f FileBlobs) Put(_ context.Context, key string, data []byte) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.Dir, "tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// Get implements BlobStore.
func (f FileBlobs) Get(_ context.Context, key string) ([]byte, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrBlobNotFound, key)
	}
	return data, err
}

// RedisBlobs keeps blobs in Redis under Prefix+key, expiring after TTL
// (0: never; keep it longer than any workflow's retention).
type RedisBlobs struct {
	Client redis.UniversalClient
	Prefix string
	TTL    time.Duration
}

// Put implements BlobStore.
func (r RedisBlobs) Put(ctx context.Context, key string, data []byte) error {
	return r.Client.SetNX(ctx, r.Prefix+key, data, r.TTL).Err()
}

// Get implements BlobStore.
func (r RedisBlobs) Get(ctx context.Context, key string) ([]byte, error) {
	data, err := r.Client.Get(ctx, r.Prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %s", ErrBlobNotFound, key)
	}
	return data, err
}
