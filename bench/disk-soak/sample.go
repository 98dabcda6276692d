package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// kind is what a file of the data directory is, as the red team counted.
type kind int

const (
	kindSnapshots kind = iota // chats/<id>/.playwright-mcp/…: the browser's own files
	kindResults               // chats/<id>/results/…: tool results saved over the cap
	kindArchives              // private/<id>/transcript-<time>.jsonl: conversations left with /new
	kindImages                // private/<id>/images/…: images of the conversations, live and archived
	kindRest                  // everything else: uploads, live transcripts, browser state, inbox, usage
	nKinds
)

var kindNames = [nKinds]string{".playwright-mcp/", "results/", "archived transcripts", "images", "the rest"}

type count struct{ bytes, files int64 }

func (c *count) add(size int64) { c.bytes += size; c.files++ }

// chatUse is one chat's files.
type chatUse struct {
	kinds [nKinds]count
	all   count // its workspace and private folder
	live  count // the images its live conversation shows
}

// counted is what the chat's budget counts: the browser's files, the saved
// results, the archived transcripts (the newest is counted, but never
// pruned) and the images but those the live conversation shows.
func (c *chatUse) counted() count {
	var n count
	for _, k := range []kind{kindSnapshots, kindResults, kindArchives, kindImages} {
		n.bytes += c.kinds[k].bytes
		n.files += c.kinds[k].files
	}
	n.bytes -= c.live.bytes
	n.files -= c.live.files
	return n
}

// imageRe finds the images a transcript shows (llm.Image's path, relative
// to the private folder).
var imageRe = regexp.MustCompile(`"path":"(images/[^"]+)"`)

// liveImages are the images the chat's live transcript shows, relative to
// its private folder.
func liveImages(private string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(private, "transcript.jsonl"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := map[string]bool{}
	for _, m := range imageRe.FindAllSubmatch(b, -1) {
		out[string(m[1])] = true
	}
	return out, nil
}

// sample is the data directory at one time.
type sample struct {
	at    time.Duration // since the burst began
	total count
	kinds [nKinds]count
	chats map[int64]*chatUse
}

// measure walks the data directory. Files removed while it walks (the
// budget prunes as it likes) are skipped.
func measure(data string, at time.Duration) (sample, error) {
	s := sample{at: at, chats: map[int64]*chatUse{}}
	err := filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed since it was listed
		}
		rel, _ := filepath.Rel(data, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		k, chat := classify(parts)
		size := info.Size()
		s.total.add(size)
		s.kinds[k].add(size)
		if chat != 0 {
			c := s.chats[chat]
			if c == nil {
				c = &chatUse{}
				s.chats[chat] = c
			}
			c.kinds[k].add(size)
			c.all.add(size)
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	for id, c := range s.chats {
		if c.kinds[kindImages].files == 0 {
			continue
		}
		private := filepath.Join(data, "private", strconv.FormatInt(id, 10))
		live, err := liveImages(private)
		if err != nil {
			return s, err
		}
		for name := range live {
			if info, err := os.Stat(filepath.Join(private, name)); err == nil {
				c.live.add(info.Size())
			}
		}
	}
	return s, nil
}

// classify tells a file's kind and chat (0: none) from its path's parts
// under the data directory.
func classify(parts []string) (kind, int64) {
	if len(parts) < 3 || (parts[0] != "chats" && parts[0] != "private") {
		return kindRest, 0
	}
	chat, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return kindRest, 0
	}
	switch {
	case parts[0] == "chats" && parts[2] == ".playwright-mcp":
		return kindSnapshots, chat
	case parts[0] == "chats" && parts[2] == "results":
		return kindResults, chat
	case parts[0] == "private" && len(parts) == 3 && strings.HasPrefix(parts[2], "transcript-") && strings.HasSuffix(parts[2], ".jsonl"):
		return kindArchives, chat
	case parts[0] == "private" && parts[2] == "images":
		return kindImages, chat
	}
	return kindRest, chat
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// perChat is the mean and the largest of f over the chats.
func (s sample) perChat(chats int, f func(*chatUse) int64) (mean float64, most int64) {
	var sum int64
	for _, c := range s.chats {
		v := f(c)
		sum += v
		most = max(most, v)
	}
	return float64(sum) / float64(max(chats, 1)), most
}

func countedBytes(c *chatUse) int64 { return c.counted().bytes }
func countedFiles(c *chatUse) int64 { return c.counted().files }
func allBytes(c *chatUse) int64     { return c.all.bytes }

// table prints one row every rowEvery (and the last sample).
func table(w io.Writer, samples []sample, chats int, rowEvery time.Duration) {
	fmt.Fprint(w, "| t | data dir | files | a chat: counted by its budget, mean / max | counted files, mean / max | a chat's folders, mean / max |")
	for k := range nKinds {
		fmt.Fprintf(w, " %s |", kindNames[k])
	}
	fmt.Fprintln(w, "\n|---:|---:|---:|---:|---:|---:|"+strings.Repeat("---:|", int(nKinds)))
	next := time.Duration(0)
	for i, s := range samples {
		if s.at < next && i != len(samples)-1 {
			continue
		}
		next = s.at.Truncate(rowEvery) + rowEvery
		cb, cbMax := s.perChat(chats, countedBytes)
		cf, cfMax := s.perChat(chats, countedFiles)
		ab, abMax := s.perChat(chats, allBytes)
		fmt.Fprintf(w, "| %s | %.1f MB | %d | %.2f / %.2f MB | %.0f / %d | %.2f / %.2f MB |", clock(s.at), mb(s.total.bytes), s.total.files,
			mb(int64(cb)), mb(cbMax), cf, cfMax, mb(int64(ab)), mb(abMax))
		for k := range nKinds {
			fmt.Fprintf(w, " %.1f MB, %d |", mb(s.kinds[k].bytes), s.kinds[k].files)
		}
		fmt.Fprintln(w)
	}
}

func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// slope is the least-squares rate of f over the samples, per hour.
func slope(samples []sample, f func(sample) float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, s := range samples {
		x, y := s.at.Hours(), f(s)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// growth prints the rates (least squares) over the samples from the given
// part of the run on, and the peaks.
func growth(w io.Writer, samples []sample, chats int, budget int64, from float64) {
	if len(samples) < 3 {
		return
	}
	last := samples[len(samples)-1]
	i := slices.IndexFunc(samples, func(s sample) bool { return float64(s.at) >= from*float64(last.at) })
	tail := samples[min(i, len(samples)-3):]
	perHour := func(f func(sample) int64) float64 {
		return slope(tail, func(s sample) float64 { return float64(f(s)) })
	}
	fmt.Fprintf(w, "growth from %s to %s (least squares over %d samples): data dir %+.1f MB/h, %+.0f files/h", clock(tail[0].at), clock(last.at), len(tail),
		mb(int64(perHour(func(s sample) int64 { return s.total.bytes }))), perHour(func(s sample) int64 { return s.total.files }))
	for k := range nKinds {
		fmt.Fprintf(w, "; %s %+.1f MB/h, %+.0f files/h", kindNames[k], mb(int64(perHour(func(s sample) int64 { return s.kinds[k].bytes }))),
			perHour(func(s sample) int64 { return s.kinds[k].files }))
	}
	chatRate := slope(tail, func(s sample) float64 { m, _ := s.perChat(chats, countedBytes); return m })
	filesRate := slope(tail, func(s sample) float64 { m, _ := s.perChat(chats, countedFiles); return m })
	fmt.Fprintf(w, "; a chat's counted files %+.2f MB/h, %+.1f files/h\n", chatRate/(1<<20), filesRate)

	var peak sample
	var peakChat, peakChatFiles int64
	var peakAt time.Duration
	over := 0
	for _, s := range samples {
		if s.total.bytes > peak.total.bytes {
			peak = s
		}
		_, most := s.perChat(chats, countedBytes)
		if most > peakChat {
			peakChat, peakAt = most, s.at
		}
		_, mostFiles := s.perChat(chats, countedFiles)
		peakChatFiles = max(peakChatFiles, mostFiles)
		if most > budget {
			over++
		}
	}
	fmt.Fprintf(w, "peak: data dir %.1f MB (%d files) at %s; a chat's counted files at most %.2f MB (%d bytes, at %s) and %d files; "+
		"samples with a chat over its budget of %.0f MB (%d bytes): %d of %d\n",
		mb(peak.total.bytes), peak.total.files, clock(peak.at), mb(peakChat), peakChat, clock(peakAt), peakChatFiles, mb(budget), budget, over, len(samples))
}

// writeCSV writes every sample: the time, the data directory's bytes and
// files, each kind's, and a chat's counted bytes and files (mean, max).
func writeCSV(path string, samples []sample, chats int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	head := []string{"seconds", "bytes", "files"}
	for k := range nKinds {
		head = append(head, kindNames[k]+" bytes", kindNames[k]+" files")
	}
	_ = w.Write(append(head, "chat counted bytes mean", "chat counted bytes max", "chat counted files mean", "chat counted files max"))
	for _, s := range samples {
		row := []string{strconv.FormatFloat(s.at.Seconds(), 'f', 1, 64), strconv.FormatInt(s.total.bytes, 10), strconv.FormatInt(s.total.files, 10)}
		for k := range nKinds {
			row = append(row, strconv.FormatInt(s.kinds[k].bytes, 10), strconv.FormatInt(s.kinds[k].files, 10))
		}
		cb, cbMax := s.perChat(chats, countedBytes)
		cf, cfMax := s.perChat(chats, countedFiles)
		_ = w.Write(append(row, strconv.FormatFloat(cb, 'f', 0, 64), strconv.FormatInt(cbMax, 10),
			strconv.FormatFloat(cf, 'f', 1, 64), strconv.FormatInt(cfMax, 10)))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
