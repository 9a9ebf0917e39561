package openapi

import "testing"

func TestAcceptedIsBounded(t *testing.T) {
	a := NewAccepted(3)
	for _, k := range []string{"a", "b", "c", "d"} {
		a.Add([]byte(k))
	}
	if len(a.keys) > 3 || !a.Has([]byte("d")) {
		t.Fatalf("the set is not bounded: %v", a.keys)
	}
	a.Forget()
	if a.Has([]byte("d")) {
		t.Fatal("Forget kept a key")
	}
}
