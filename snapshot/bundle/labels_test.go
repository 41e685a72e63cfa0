package bundle

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestCashWordsPastLabels checks that a bundle read by a process that
// holds all the 256 words a Label numbers is refused on its cash
// actions' lines with a clear error, never read with a word lost. The
// words are the process's for good: the check runs in a child process.
func TestCashWordsPastLabels(t *testing.T) {
	if os.Getenv("PREGAO_TEST_LABEL_FLOOD") == "1" {
		for i := 0; ; i++ {
			if _, ok := engine.LabelOf(fmt.Sprintf("FLOOD %03d", i)); !ok {
				break
			}
		}
		_, err := Read(copyDir(t, smallDir))
		if err == nil || !strings.Contains(err.Error(), "one word too many") || !strings.Contains(err.Error(), FileCashActions) {
			t.Fatalf("Read with every Label taken: %v", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCashWordsPastLabels$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PREGAO_TEST_LABEL_FLOOD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
