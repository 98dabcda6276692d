package fakemcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ModeManyTools serves ManyToolsCount tools of a code-hosting service
// (issues, pull requests, repositories, …) instead of the normal set: a
// catalogue the size of github-mcp-server's, with descriptions and
// schemas of the same weight (about 190 tokens a tool), for the token
// benchmarks. Every tool answers with its name and arguments.
const ModeManyTools = "many-tools"

// ManyToolsCount is how many tools ModeManyTools serves.
const ManyToolsCount = 60

type manyParam struct {
	name, typ, desc string
	required        bool
	enum            []string
}

type manyTool struct {
	name, desc string
	params     []manyParam
}

var (
	pOwner    = manyParam{"owner", "string", "Account that owns the repository (a user or an organisation login).", true, nil}
	pRepo     = manyParam{"repo", "string", "Name of the repository, without the owner.", true, nil}
	pIssue    = manyParam{"issue_number", "number", "Number of the issue, as shown in its URL.", true, nil}
	pPull     = manyParam{"pull_number", "number", "Number of the pull request, as shown in its URL.", true, nil}
	pPage     = manyParam{"page", "number", "Page number of the results to fetch, starting at 1.", false, nil}
	pPerPage  = manyParam{"perPage", "number", "Results per page, at most 100 (default 30).", false, nil}
	pBranch   = manyParam{"branch", "string", "Name of the branch, e.g. main.", true, nil}
	pRef      = manyParam{"ref", "string", "A branch, tag or commit SHA; the default branch when left out.", false, nil}
	pPath     = manyParam{"path", "string", "Path of the file or folder in the repository.", true, nil}
	pState    = manyParam{"state", "string", "Filter by state.", false, []string{"open", "closed", "all"}}
	pSort     = manyParam{"sort", "string", "What to sort the results by.", false, []string{"created", "updated", "comments"}}
	pDir      = manyParam{"direction", "string", "Sort direction.", false, []string{"asc", "desc"}}
	pQuery    = manyParam{"query", "string", "Search query in the service's search syntax, e.g. 'is:open label:bug'.", true, nil}
	pBody     = manyParam{"body", "string", "Text of the body, in Markdown.", true, nil}
	pTitle    = manyParam{"title", "string", "Title, one line.", true, nil}
	pLabels   = manyParam{"labels", "array", "Names of the labels to apply.", false, nil}
	pAssignee = manyParam{"assignees", "array", "Logins of the users to assign.", false, nil}
	pRunID    = manyParam{"run_id", "number", "ID of the workflow run.", true, nil}
	pUser     = manyParam{"username", "string", "Login of the user.", true, nil}
	pOrg      = manyParam{"org", "string", "Login of the organisation.", true, nil}
	pSHA      = manyParam{"sha", "string", "Commit SHA, full or abbreviated.", true, nil}
	pTag      = manyParam{"tag", "string", "Name of the tag, e.g. v1.2.0.", true, nil}
	pAlert    = manyParam{"alert_number", "number", "Number of the alert.", true, nil}
	pNotif    = manyParam{"threadID", "string", "ID of the notification thread.", true, nil}
)

func opt(p manyParam) manyParam { p.required = false; return p }

var manyTools = []manyTool{
	{"search_repositories", "Search for repositories by name, description, topics or language. Returns names, descriptions, stars and URLs.", []manyParam{pQuery, pSort, pPage, pPerPage}},
	{"get_repository", "Get the details of a repository: description, default branch, visibility, topics, license and counts of stars, forks and open issues.", []manyParam{pOwner, pRepo}},
	{"create_repository", "Create a new repository in your account or in an organisation you belong to.", []manyParam{{"name", "string", "Name of the new repository.", true, nil}, {"description", "string", "Short description.", false, nil}, {"private", "boolean", "Whether the repository is private.", false, nil}, {"autoInit", "boolean", "Create an initial commit with a README.", false, nil}}},
	{"fork_repository", "Fork a repository to your account or to an organisation.", []manyParam{pOwner, pRepo, {"organization", "string", "Organisation to fork into; your account when left out.", false, nil}}},
	{"delete_repository", "Delete a repository for good. This cannot be undone: ask the user first.", []manyParam{pOwner, pRepo}},
	{"list_branches", "List the branches of a repository, with the commit each points at and whether it is protected.", []manyParam{pOwner, pRepo, pPage, pPerPage}},
	{"create_branch", "Create a new branch from an existing branch or commit.", []manyParam{pOwner, pRepo, pBranch, {"from_branch", "string", "Branch to start from; the default branch when left out.", false, nil}}},
	{"delete_branch", "Delete a branch of a repository.", []manyParam{pOwner, pRepo, pBranch}},
	{"get_branch_protection", "Get the protection rules of a branch: required reviews, status checks and who may push.", []manyParam{pOwner, pRepo, pBranch}},
	{"list_commits", "List the commits of a branch or path, newest first, with author, date and message.", []manyParam{pOwner, pRepo, opt(pSHA), opt(pPath), {"author", "string", "Only commits by this login or e-mail.", false, nil}, pPage, pPerPage}},
	{"get_commit", "Get one commit: message, author, parents, changed files and their diffs.", []manyParam{pOwner, pRepo, pSHA, pPage, pPerPage}},
	{"compare_commits", "Compare two commits, branches or tags: the commits between them and the changed files.", []manyParam{pOwner, pRepo, {"base", "string", "Base ref.", true, nil}, {"head", "string", "Head ref.", true, nil}}},
	{"get_file_contents", "Get the contents of a file, or the listing of a folder, at a ref.", []manyParam{pOwner, pRepo, pPath, pRef}},
	{"create_or_update_file", "Create a file, or replace the contents of one, in a single commit on a branch.", []manyParam{pOwner, pRepo, pPath, {"content", "string", "New contents of the file.", true, nil}, {"message", "string", "Commit message.", true, nil}, pBranch, {"sha", "string", "SHA of the file being replaced; required to update.", false, nil}}},
	{"delete_file", "Delete a file from a branch in a single commit.", []manyParam{pOwner, pRepo, pPath, {"message", "string", "Commit message.", true, nil}, pBranch}},
	{"push_files", "Push several files to a branch in one commit.", []manyParam{pOwner, pRepo, pBranch, {"files", "array", "Files to push, each an object with path and content.", true, nil}, {"message", "string", "Commit message.", true, nil}}},
	{"search_code", "Search for code across repositories. Returns the files that match with the matching fragments.", []manyParam{pQuery, {"order", "string", "Sort order.", false, []string{"asc", "desc"}}, pPage, pPerPage}},
	{"list_tags", "List the tags of a repository with the commits they point at.", []manyParam{pOwner, pRepo, pPage, pPerPage}},
	{"get_tag", "Get one tag: the commit it points at, its tagger and message.", []manyParam{pOwner, pRepo, pTag}},
	{"list_releases", "List the releases of a repository, newest first, with their tags and assets.", []manyParam{pOwner, pRepo, pPage, pPerPage}},
	{"get_latest_release", "Get the latest published release of a repository with its notes and assets.", []manyParam{pOwner, pRepo}},
	{"create_release", "Create a release for a tag, with a title and release notes.", []manyParam{pOwner, pRepo, {"tag_name", "string", "Tag of the release; created when missing.", true, nil}, {"name", "string", "Title of the release.", false, nil}, {"body", "string", "Release notes, in Markdown.", false, nil}, {"draft", "boolean", "Save as a draft.", false, nil}, {"prerelease", "boolean", "Mark as a pre-release.", false, nil}}},
	{"list_issues", "List the issues of a repository, filtered by state, labels and assignee, sorted as asked.", []manyParam{pOwner, pRepo, pState, pLabels, pSort, pDir, {"since", "string", "Only issues updated at or after this time, ISO 8601.", false, nil}, pPage, pPerPage}},
	{"get_issue", "Get one issue: title, body, state, labels, assignees, milestone and reactions.", []manyParam{pOwner, pRepo, pIssue}},
	{"create_issue", "Open a new issue in a repository.", []manyParam{pOwner, pRepo, pTitle, opt(pBody), pLabels, pAssignee, {"milestone", "number", "Number of the milestone.", false, nil}}},
	{"update_issue", "Change an issue: title, body, state, labels, assignees or milestone.", []manyParam{pOwner, pRepo, pIssue, opt(pTitle), opt(pBody), pState, pLabels, pAssignee}},
	{"add_issue_comment", "Add a comment to an issue or a pull request.", []manyParam{pOwner, pRepo, pIssue, pBody}},
	{"list_issue_comments", "List the comments of an issue, oldest first.", []manyParam{pOwner, pRepo, pIssue, pPage, pPerPage}},
	{"search_issues", "Search issues and pull requests across repositories with the search syntax.", []manyParam{pQuery, pSort, {"order", "string", "Sort order.", false, []string{"asc", "desc"}}, pPage, pPerPage}},
	{"list_labels", "List the labels defined in a repository with their colours and descriptions.", []manyParam{pOwner, pRepo, pPage, pPerPage}},
	{"create_label", "Create a label in a repository.", []manyParam{pOwner, pRepo, {"name", "string", "Name of the label.", true, nil}, {"color", "string", "Colour as six hex digits, without #.", true, nil}, {"description", "string", "What the label means.", false, nil}}},
	{"list_milestones", "List the milestones of a repository with their due dates and progress.", []manyParam{pOwner, pRepo, pState, pPage, pPerPage}},
	{"list_pull_requests", "List the pull requests of a repository, filtered by state, base and head branches.", []manyParam{pOwner, pRepo, pState, {"base", "string", "Only pull requests into this branch.", false, nil}, {"head", "string", "Only pull requests from this user:branch.", false, nil}, pSort, pDir, pPage, pPerPage}},
	{"get_pull_request", "Get one pull request: title, body, state, branches, mergeability, reviewers and checks.", []manyParam{pOwner, pRepo, pPull}},
	{"create_pull_request", "Open a pull request from a head branch into a base branch.", []manyParam{pOwner, pRepo, pTitle, opt(pBody), {"head", "string", "Branch with the changes.", true, nil}, {"base", "string", "Branch to merge into.", true, nil}, {"draft", "boolean", "Open as a draft.", false, nil}}},
	{"update_pull_request", "Change a pull request's title, body, base branch or state.", []manyParam{pOwner, pRepo, pPull, opt(pTitle), opt(pBody), pState, {"base", "string", "New base branch.", false, nil}}},
	{"merge_pull_request", "Merge a pull request by merge commit, squash or rebase.", []manyParam{pOwner, pRepo, pPull, {"merge_method", "string", "How to merge.", false, []string{"merge", "squash", "rebase"}}, {"commit_title", "string", "Title of the merge commit.", false, nil}}},
	{"get_pull_request_files", "List the files a pull request changes, with additions, deletions and patches.", []manyParam{pOwner, pRepo, pPull, pPage, pPerPage}},
	{"get_pull_request_diff", "Get the unified diff of a pull request.", []manyParam{pOwner, pRepo, pPull}},
	{"get_pull_request_status", "Get the combined status of the checks on a pull request's head commit.", []manyParam{pOwner, pRepo, pPull}},
	{"list_pull_request_reviews", "List the reviews of a pull request with their states and bodies.", []manyParam{pOwner, pRepo, pPull}},
	{"create_pull_request_review", "Review a pull request: approve, request changes or comment, with line comments.", []manyParam{pOwner, pRepo, pPull, opt(pBody), {"event", "string", "The review's verdict.", true, []string{"APPROVE", "REQUEST_CHANGES", "COMMENT"}}, {"comments", "array", "Line comments, each with path, line and body.", false, nil}}},
	{"request_reviewers", "Ask users or teams to review a pull request.", []manyParam{pOwner, pRepo, pPull, {"reviewers", "array", "Logins of the users.", false, nil}, {"team_reviewers", "array", "Slugs of the teams.", false, nil}}},
	{"list_workflows", "List the CI workflows defined in a repository.", []manyParam{pOwner, pRepo, pPage, pPerPage}},
	{"list_workflow_runs", "List the runs of a workflow, newest first, with their status and conclusion.", []manyParam{pOwner, pRepo, {"workflow_id", "string", "ID or file name of the workflow.", true, nil}, opt(pBranch), {"status", "string", "Filter by status.", false, []string{"queued", "in_progress", "completed", "failure", "success"}}, pPage, pPerPage}},
	{"get_workflow_run", "Get one workflow run: its trigger, commit, status, conclusion and timing.", []manyParam{pOwner, pRepo, pRunID}},
	{"get_job_logs", "Get the logs of the jobs of a workflow run, or of its failed jobs only.", []manyParam{pOwner, pRepo, pRunID, {"failed_only", "boolean", "Only the jobs that failed.", false, nil}, {"tail_lines", "number", "Only the last lines of each log.", false, nil}}},
	{"rerun_workflow_run", "Run a workflow run again, all its jobs or the failed ones.", []manyParam{pOwner, pRepo, pRunID, {"failed_only", "boolean", "Only the jobs that failed.", false, nil}}},
	{"cancel_workflow_run", "Cancel a workflow run that is queued or in progress.", []manyParam{pOwner, pRepo, pRunID}},
	{"list_code_scanning_alerts", "List the code scanning alerts of a repository, filtered by state and severity.", []manyParam{pOwner, pRepo, pState, {"severity", "string", "Filter by severity.", false, []string{"critical", "high", "medium", "low"}}, pRef}},
	{"get_code_scanning_alert", "Get one code scanning alert with its rule, location and history.", []manyParam{pOwner, pRepo, pAlert}},
	{"list_dependabot_alerts", "List the dependency vulnerability alerts of a repository.", []manyParam{pOwner, pRepo, pState, {"severity", "string", "Filter by severity.", false, []string{"critical", "high", "medium", "low"}}}},
	{"list_secret_scanning_alerts", "List the alerts for secrets committed to a repository.", []manyParam{pOwner, pRepo, pState}},
	{"get_me", "Get the profile of the authenticated user: login, name, e-mail and plan.", nil},
	{"get_user", "Get the public profile of a user.", []manyParam{pUser}},
	{"search_users", "Search for users by login, name, location or followers.", []manyParam{pQuery, pPage, pPerPage}},
	{"list_org_members", "List the members of an organisation with their roles.", []manyParam{pOrg, {"role", "string", "Filter by role.", false, []string{"all", "admin", "member"}}, pPage, pPerPage}},
	{"list_notifications", "List your notifications: mentions, review requests and updates of threads you follow.", []manyParam{{"filter", "string", "Which notifications.", false, []string{"default", "include_read", "only_participating"}}, {"since", "string", "Only notifications updated after this time, ISO 8601.", false, nil}, pPage, pPerPage}},
	{"mark_notification_read", "Mark a notification thread as read.", []manyParam{pNotif}},
	{"create_gist", "Create a gist with one or more files.", []manyParam{{"description", "string", "Description of the gist.", false, nil}, {"filename", "string", "Name of the file.", true, nil}, {"content", "string", "Contents of the file.", true, nil}, {"public", "boolean", "Whether the gist is public.", false, nil}}},
}

// ManyToolNames are ModeManyTools' tool names, in its order.
func ManyToolNames() []string {
	names := make([]string, len(manyTools))
	for i, t := range manyTools {
		names[i] = t.name
	}
	return names
}

func manyServerTools() []server.ServerTool {
	out := make([]server.ServerTool, 0, len(manyTools))
	for _, t := range manyTools {
		props := map[string]any{}
		var required []string
		for _, p := range t.params {
			prop := map[string]any{"type": p.typ, "description": p.desc}
			if p.enum != nil {
				prop["enum"] = p.enum
			}
			if p.typ == "array" {
				prop["items"] = map[string]any{"type": "string"}
			}
			props[p.name] = prop
			if p.required {
				required = append(required, p.name)
			}
		}
		schema := map[string]any{"type": "object", "properties": props}
		if required != nil {
			schema["required"] = required
		}
		raw, err := json.Marshal(schema)
		if err != nil {
			panic(err)
		}
		name := t.name
		out = append(out, server.ServerTool{
			Tool: mcp.NewToolWithRawSchema(name, t.desc, raw),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args, _ := json.Marshal(req.Params.Arguments)
				return mcp.NewToolResultText(fmt.Sprintf("%s done: %s", strings.ReplaceAll(name, "_", " "), args)), nil
			},
		})
	}
	return out
}

// ManyTools are ModeManyTools' tools as it lists them: name, description
// and input schema.
func ManyTools() []mcp.Tool {
	var out []mcp.Tool
	for _, st := range manyServerTools() {
		out = append(out, st.Tool)
	}
	return out
}
