# top-up of batch 6 long memories (hand-written context)
_by = {mm["name"]: mm for mm in MEMS}
for _name, _pre, _suf in [
("long_error_handling", "Written by Priya in February after the first month of the rewrite produced three different error formats.", ""),
("long_permissions_design", "Author: Priya, reviewed by Tomás and Marcus. Context: the Django prototype had a single is_admin boolean, and the first accounting-firm customers immediately asked for a role that can finalize invoices without being able to change bank details or invite people. Custom roles were requested by one prospect but are out of scope until at least 2027.",
 "Testing: tests/integration/test_permissions_matrix.py is a parametrised matrix of role x endpoint; adding a route without adding it to the matrix fails the test, which is intentional."),
("long_review_guidelines", "These guidelines were written after a retro where people said reviews were slow and inconsistent: some reviewers blocked on naming, others approved migrations without reading them.",
 "Onboarding: new engineers review with a buddy for their first two weeks."),
("long_pm_cert_expiry", "", "Detection gap: we had no monitoring on payment method availability. A synthetic Checkly check now loads a test invoice's payment page in WebKit every 30 minutes and asserts the Apple Pay button is present. We also added the well-known file to the release checklist for any change to the pay app's hosting. Time to detect was nine hours; time to fix once noticed was 20 minutes."),
("long_gotenberg_ops", "Owner: Nadia for templates, Aisha for the service.", "Local development: `docker compose up` includes gotenberg on port 3000; set GOTENBERG_URL=http://localhost:3000 in .env."),
("long_pm_replica_lag", "", "Why it took a day to find: locally and in staging there is no replica (READ_DATABASE_URL falls back to DATABASE_URL), so nobody could reproduce it outside production. Staging now has a small replica too, so the read routing is exercised before release. Nine tenants reported the issue; duplicates created during the window were cleaned up with a backfill after confirming with each tenant."),
("long_pm_ci_outage", "", "Re-run counter for the day according to the Actions API: 61 workflow re-runs across 19 PRs. Lesson for individuals: check githubstatus.com before debugging a weird CI failure, and don't re-run more than twice in a row; ask in #eng instead."),
("long_hiring_notes", "", "Reminder: interview notes go into the ATS within 24 hours; don't discuss candidates in public Slack channels."),
("long_vendor_eval", "", "Also considered and rejected quickly: Elasticsearch/OpenSearch (heavy to operate for a team our size, and the managed AWS option is expensive for a small cluster) and Algolia (pricing per record and search request would be several thousand euros per month at our volume, plus data leaves our infrastructure)."),
]:
    _c = _by[_name]["content"]
    _by[_name]["content"] = "\n\n".join(x for x in (_pre, _c, _suf) if x)
