package postgres

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// encodeByteaArray is how pgx (and so the server) writes a bytea[] in
// binary.
func encodeByteaArray(t testing.TB, v [][]byte) []byte {
	t.Helper()
	buf, err := pgtype.NewMap().Encode(pgtype.ByteaArrayOID, pgtype.BinaryFormatCode, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return buf
}

func TestAppendByteaArray(t *testing.T) {
	for _, v := range [][][]byte{{}, {{}}, {[]byte(`{"role":"user"}`)}, {[]byte("a"), {}, []byte("ccc")}} {
		got, err := appendByteaArray(nil, encodeByteaArray(t, v))
		if err != nil || len(got) != len(v) {
			t.Fatalf("%q: %q, %v", v, got, err)
		}
		for i := range v {
			if !bytes.Equal(got[i], v[i]) {
				t.Fatalf("%q: element %d is %q", v, i, got[i])
			}
		}
	}
	withNull := encodeByteaArray(t, [][]byte{[]byte("a"), nil})
	two := append(encodeByteaArray(t, [][]byte{[]byte("a")}), 0)
	for name, bad := range map[string][]byte{"empty": nil, "a NULL element": withNull, "a byte after": two,
		"cut short": withNull[:len(withNull)-6]} {
		if _, err := appendByteaArray(nil, bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzByteaArray checks appendByteaArray against pgx's decoding: what
// it accepts, pgx decodes to the same elements.
func FuzzByteaArray(f *testing.F) {
	for _, v := range [][][]byte{{}, {{}}, {[]byte("x"), []byte(`{"a":1}`)}} {
		f.Add(encodeByteaArray(f, v))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := appendByteaArray(nil, src)
		if err != nil {
			return
		}
		var want [][]byte
		if err := pgtype.NewMap().Scan(pgtype.ByteaArrayOID, pgtype.BinaryFormatCode, src, &want); err != nil {
			t.Fatalf("accepted %x, which pgx refuses: %v", src, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%x: %d elements, pgx %d", src, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%x: element %d is %q, pgx %q", src, i, got[i], want[i])
			}
		}
	})
}
