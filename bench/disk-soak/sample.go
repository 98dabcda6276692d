package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
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
	kindRest                  // everything else: uploads, live transcripts, browser state, inbox, usage
	nKinds
)

var kindNames = [nKinds]string{".playwright-mcp/", "results/", "archived transcripts", "the rest"}

type count struct{ bytes, files int64 }

func (c *count) add(size int64) { c.bytes += size; c.files++ }

// chatUse is one chat's files.
type chatUse struct {
	kinds [nKinds]count
	all   count // its workspace and private folder
}

// counted is what the chat's budget counts: the browser's files, the saved
// results and the archived transcripts (the newest is counted, but never
// pruned; images only archives show would count too: this soak takes no
// screenshots).
func (c *chatUse) counted() count {
	var n count
	for _, k := range []kind{kindSnapshots, kindResults, kindArchives} {
		n.bytes += c.kinds[k].bytes
		n.files += c.kinds[k].files
	}
	return n
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
	return s, err
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
	fmt.Fprintln(w, "| t | data dir | files | a chat: counted by its budget, mean / max | counted files, mean / max | a chat's folders, mean / max |"+
		" .playwright-mcp/ | results/ | archived transcripts | the rest |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
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

// growth prints the rates over the samples from the given part of the run
// on, and the peaks.
func growth(w io.Writer, samples []sample, chats int, budget int64, from float64) {
	if len(samples) < 2 {
		return
	}
	last := samples[len(samples)-1]
	i := slices.IndexFunc(samples, func(s sample) bool { return float64(s.at) >= from*float64(last.at) })
	first := samples[min(i, len(samples)-2)]
	hours := (last.at - first.at).Hours()
	rate := func(a, b int64) float64 { return float64(b-a) / hours }
	fmt.Fprintf(w, "growth from %s to %s: data dir %+.0f MB/h, %+.0f files/h", clock(first.at), clock(last.at),
		mb(int64(rate(first.total.bytes, last.total.bytes))), rate(first.total.files, last.total.files))
	for k := range nKinds {
		fmt.Fprintf(w, "; %s %+.0f MB/h, %+.0f files/h", kindNames[k], mb(int64(rate(first.kinds[k].bytes, last.kinds[k].bytes))),
			rate(first.kinds[k].files, last.kinds[k].files))
	}
	a, _ := first.perChat(chats, countedBytes)
	b, _ := last.perChat(chats, countedBytes)
	fmt.Fprintf(w, "; a chat's counted files %+.1f MB/h\n", (b-a)/(1<<20)/hours)

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
	fmt.Fprintf(w, "peak: data dir %.1f MB (%d files) at %s; a chat's counted files at most %.2f MB (at %s) and %d files; "+
		"samples with a chat over its budget of %.0f MB: %d of %d\n",
		mb(peak.total.bytes), peak.total.files, clock(peak.at), mb(peakChat), clock(peakAt), peakChatFiles, mb(budget), over, len(samples))
}
