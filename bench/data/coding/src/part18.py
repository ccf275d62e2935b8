# ---- Long memories batch 6 ----
m("long_pm_beat_double", "08-13", "gotcha", """Post-mortem: recurring invoices generated twice (2026-08-12).

Severity: SEV2. Author: Aisha. About 310 recurring invoices for 52 tenants were generated twice on the morning of August 12, and 118 of them were auto-finalized and emailed to customers before we noticed.

Background: recurring invoice generation runs from Celery beat. On Fly we had exactly one beat process by construction (a separate process group with count 1). During the AWS migration the beat service was defined in Terraform with the ecs-service module, whose default desired_count is 2 for availability. Nobody overrode it for beat. The advisory lock in generate_recurring_invoices should have prevented double generation, but it uses pg_try_advisory_xact_lock, which is released at the end of each transaction, and the task commits per schedule row. The two beat instances' tasks interleaved and the FOR UPDATE SKIP LOCKED selection only protected rows currently being processed, not rows already processed by the other task a moment before, since next_run_on was updated in a separate statement after invoice creation.

What we did: set desired_count = 1 for beat in Terraform, voided the duplicate drafts, and for the 118 finalized duplicates created credit notes and sent an apology email template written by Marcus.

Prevention: (1) the ecs-service module now requires desired_count explicitly, no default; (2) next_run_on is advanced in the same statement that claims the schedule row (UPDATE ... SET next_run_on = ... WHERE id = ... AND next_run_on = :old RETURNING id), so a second claim finds nothing; (3) a unique constraint on invoices(recurring_schedule_id, period_start) makes a duplicate impossible even if everything else fails. Number (3) is the real fix; the others reduce noise.""")
q("p", "some customers received the same monthly invoice twice in August, what guarantees it can't happen again?", "long_pm_beat_double")
q("k", "What is the desired_count for the beat service and why?", "long_pm_beat_double")
q("m", "Why must beat run as a single instance and what protects recurring invoices from double generation?", ["long_aws_migration", "long_pm_beat_double"])

m("long_error_handling", "02-09", "convention", """Backend error handling conventions.

Layers: domain services raise domain exceptions from ledgerly/<domain>/errors.py (e.g. InvoiceAlreadyFinalized, PlanLimitReached). They never know about HTTP. The API layer maps domain exceptions to problem+json responses in ledgerly/api/errors.py with a single exception handler; the mapping table (exception class -> status, code) lives there. Routes therefore don't catch domain exceptions unless they need to add context.

Unexpected exceptions are not caught anywhere except the global handler, which logs with exc_info, reports to Sentry, and returns a 500 problem with code internal_error and the request id. Don't wrap code in try/except Exception to log and re-raise — you get the error twice in Sentry.

Validation: Pydantic validation errors return 422 with code validation_error and an errors array in our own format (field path as a JSON pointer, message), not FastAPI's default detail list. The frontend's form helpers map the JSON pointers back to form fields.

Retries in tasks: tasks declare autoretry_for only for known transient errors (httpx.TransportError, stripe.error.APIConnectionError, OperationalError for serialization failures) with retry_backoff=True and max_retries=5. Everything else fails immediately and goes to Sentry; don't use autoretry_for=(Exception,).

External API errors: Stripe card errors are user errors (402 with code card_declined and the decline code), other Stripe errors are 502 with code payment_provider_error.""")
q("k", "Which exceptions should Celery tasks auto-retry on?", "long_error_handling")
q("p", "each crash from my new feature shows up as two separate events in our error tracker", "long_error_handling")
q("p", "what HTTP response does the frontend get when the bank refuses someone's card?", "long_error_handling")

m("long_pm_cert_expiry", "04-25", "gotcha", """Post-mortem: Apple Pay stopped working on the hosted payment page (2026-04-24).

Severity: SEV3. Author: Jun. For about nine hours, the Apple Pay button disappeared from pay.ledgerly.io for all Safari users. Card payments and other methods kept working, so most customers paid by card; a few tenants reported fewer Apple Pay payments than usual.

Cause: Apple Pay on the web requires domain verification. Stripe verifies the domain by fetching /.well-known/apple-developer-merchantid-domain-association from pay.ledgerly.io. When the hosted page moved to its own Vite app (pay/) in early April, the file was not copied into pay/public/, so the new deployment served the SPA's index.html for that path with status 200. Apple's periodic re-verification then failed and the domain was marked unverified. Nothing errored on our side; the button simply didn't render.

Fix: the file is now in pay/public/.well-known/ and a Playwright test checks that the path returns the expected content type and not HTML. The SPA fallback in the pay app now returns 404 for any path under /.well-known/ instead of index.html.

Also: Google Pay doesn't need domain verification through Stripe, which is why it kept working, and Link was unaffected.""")
q("p", "the Apple Pay button vanished from the payment page but cards work fine", "long_pm_cert_expiry")
q("k", "Where must the Apple Pay domain association file live in the pay app?", "long_pm_cert_expiry")

m("long_review_guidelines", "03-16", "convention", """Code review guidelines (Priya).

Size: aim for PRs under 400 changed lines excluding generated files, lockfiles and snapshots. If a change is bigger, split it: schema first, then backend, then frontend, each shippable behind a flag.

Turnaround: first review within one working day. If you're blocked, ask in #eng-reviews rather than pinging individuals. Reviews before standup are encouraged.

What reviewers look at, in order: correctness and tenant isolation (does every query filter by tenant or run under RLS?), migrations (backward compatible? lock risk on big tables?), money handling (Decimal, rounding via Money), tests at the right level, observability (does a failure produce a useful log/Sentry event?), and only then naming and style. Style nits that a formatter or linter could catch should become lint rules, not comments.

Comment prefixes: 'nit:' optional, 'q:' question, 'blocking:' must be addressed. Approve with nits when only nits remain; the author decides.

Authors: write the PR description with what and why, link the Linear issue, include screenshots for UI changes, and mention anything you want specific eyes on. Don't force-push after a review has started; push fixup commits, since we squash anyway.

Self-merge: authors merge their own PRs after approval, once CI is green. Merging is the author's responsibility because they know whether it needs a flag flip or an announcement afterwards.""")
q("k", "What comment prefix marks a review comment that must be addressed?", "long_review_guidelines")
q("p", "a reviewer asked me to stop force-pushing, why does it matter?", "long_review_guidelines")
q("p", "my pull request is huge, over a thousand lines, is that a problem?", "long_review_guidelines")

m("long_pm_replica_lag", "09-25", "gotcha", """Post-mortem: invoices 'disappearing' right after creation (2026-09-23).

Severity: SEV3. Author: Nadia. Users created an invoice and were redirected to the list, where the new invoice was missing for several seconds; some created it again, leading to duplicates.

Cause: as part of the July performance work we routed GET /invoices to the read replica through get_read_session() to reduce load on the primary. Replica lag is usually under a second, but from September 22 a long-running autovacuum on invoice_events (after the vacuum tuning migration on September 12 changed settings and a large batch of events accumulated) produced replica lag of 20-40 seconds during business hours. The list endpoint showed stale data.

Fix: read-your-writes for list endpoints. After a write, the api sets a short-lived cookie (lk_rw, 30 seconds) and requests carrying it are served from the primary. Background reports and exports still use the replica. We also added a replica lag alert at 10 seconds.

Side fix: the web app now inserts the created invoice into the TanStack Query cache optimistically, so the list shows it immediately regardless of which database serves the next fetch.""")
q("p", "users create an invoice and it's not in the list for a few seconds, then it appears", "long_pm_replica_lag")
q("k", "What does the lk_rw cookie do?", "long_pm_replica_lag")
q("m", "When should code read from the replica and what are the pitfalls?", ["readonly_replica", "long_pm_replica_lag"])

m("long_hiring_notes", "07-10", "noise", """Notes on the frontend hiring process (July), for Marcus and Jun.

We're hiring one frontend engineer with strong React and TypeScript, ideally with experience in data-heavy UIs. Salary band agreed with Marcus. Remote within EU time zones is fine, but the person should be able to come to Leipzig once a quarter.

Process: 30 minute intro call with Jun, 90 minute pair programming session on a small feature in a sanitized copy of the invoice list (no take-home), 45 minute conversation with Priya about past projects, then a short call with Marcus. We aim to finish within two weeks of the first call and give written feedback to everyone who reaches the pairing session.

Sourcing: Berlin Startup Jobs, LinkedIn, and referrals (referral bonus 2,000 EUR after probation). We won't use agencies.

Evaluation rubric: problem decomposition, communication while coding, testing instincts, TypeScript fluency, and product sense (do they ask who uses the screen). Each interviewer scores independently before the debrief to avoid anchoring.

Status: 64 applications, 11 intro calls, 4 pairing sessions so far. Two strong candidates; decision expected in September.""")
m("long_vendor_eval", "07-17", "noise", """Evaluation: Meilisearch vs Typesense vs Postgres full-text (July).

Criteria: typo tolerance for names in German and French, per-tenant filtering, indexing throughput for 2M invoices, operational burden, cost, and licence.

Postgres FTS with pg_trgm: no new infrastructure, decent for short strings, weak at ranking and typos across words; queries on the largest tenants took 800ms+. Typesense: fast, good typo tolerance, clustering built in; the scoped API key feature maps well to tenants; the licence (GPLv3) is fine for server use. Meilisearch: excellent relevance out of the box, tenant tokens for per-tenant filtering, simple single binary, MIT licence; no high availability in the open source version.

Benchmarks on a staging copy: indexing 2M documents took 14 minutes in Meilisearch and 11 in Typesense; p95 search 18ms and 12ms respectively. Both fine.

Recommendation at the time: either works; Meilisearch slightly preferred for relevance on names with umlauts and for the simpler ops story. Decision pending Q3 planning.""")

m("long_gotenberg_ops", "09-10", "command", """Runbook: Gotenberg PDF service.

Gotenberg runs as ECS service `gotenberg` (3 tasks, 2 vCPU / 4 GB each) in the private subnets, reachable only from the worker tasks at GOTENBERG_URL=http://gotenberg.ledgerly.internal:3000 through Cloud Map service discovery. The api never calls it directly anymore; only render_invoice_pdf and render_credit_note_pdf tasks on the worker do.

Request: the worker renders the Jinja template to HTML, then POSTs it with assets (CSS, fonts, logo) as multipart to /forms/chromium/convert/html with paperWidth/paperHeight for A4 or Letter depending on tenant country. We set waitDelay to 0 and skipNetworkIdleEvent=true, since all assets are inline — rendering never fetches anything from the network, which also removes the SSRF class of bugs found in the June review.

Timeouts: Gotenberg API timeout is 30s (API_TIMEOUT env var on the service); the worker's HTTP timeout is 35s so we see Gotenberg's error rather than a client timeout.

Troubleshooting: if PDFs come out blank, the template probably references a font not included in the multipart assets; Chromium silently falls back and sometimes renders nothing for missing @font-face. Check the worker log line pdf_assets which lists what was sent. If rendering is slow for all tenants, look at the Gotenberg tasks' CPU; Chromium processes are restarted after 100 conversions (CHROMIUM_RESTART_AFTER=100) to contain memory leaks, which causes a short spike.""")
q("k", "What URL do workers use to reach Gotenberg?", "long_gotenberg_ops")
q("p", "invoice PDFs suddenly come out as blank pages after I changed the template font", "long_gotenberg_ops")
q("k", "What is Gotenberg's API timeout set to?", "long_gotenberg_ops")

m("long_pm_ci_outage", "04-10", "noise", """Note: a bad day in CI (April 9), written up for the record, no action items assigned.

In the morning, GitHub Actions had a partial outage affecting job scheduling; jobs sat in 'queued' for 40 minutes. In the afternoon, a Docker Hub rate limit hit our pulls of the stripe-mock image (we still pulled it from Docker Hub in the integration job even after moving our own images to GHCR). Later, a transient PyPI CDN issue made uv downloads fail for about 15 minutes.

None of these were our bugs, and each resolved itself. The cumulative effect was that nobody could merge anything for most of the day and three people lost their afternoon re-running jobs.

Ideas discussed in #eng, none committed to: mirror third-party images we depend on in CI to our own registry, cache the uv download cache more aggressively, and consider a merge queue so re-runs happen automatically. Aisha noted that self-hosted runners would avoid some of this but add maintenance we don't want.""")

m("long_permissions_design", "02-17", "decision", """Design note: permission model for tenant users.

Roles are fixed (no custom roles in v1) and map to a set of permission strings in ledgerly/auth/permissions.py, e.g. invoices:read, invoices:write, invoices:finalize, invoices:void, customers:write, settings:write, billing:manage, members:manage, api_keys:manage, exports:create.

owner: everything, including billing:manage (our subscription) and deleting the tenant. admin: everything except billing:manage and tenant deletion. accountant: invoices:*, customers:*, exports:create — no settings, members or API keys. member: invoices:read/write (drafts only), customers:read/write. viewer: read only.

Checks happen in two places: a FastAPI dependency require_permission on the route for coarse checks, and inside services for object-level rules (e.g. a member can only edit drafts they created when the tenant setting restrict_member_drafts is on). Never check roles by name in code (if user.role == 'admin'); always check permissions, so role definitions can change centrally.

The frontend receives the permission list in GET /me and hides or disables UI accordingly via the usePermission hook, but the backend is the source of truth.

Staff (our employees) are not tenant members; staff permissions (support, billing_ops, engineering) are separate and only apply in /admin.""")
q("k", "Which permission is required to manage our own subscription for the tenant?", "long_permissions_design")
q("p", "to allow cancelling invoices in an endpoint, may I compare the user's role name directly?", "long_permissions_design")
q("p", "a member says they can't edit a colleague's draft invoice", "long_permissions_design")
q("m", "Which roles can do what with invoices, and who can act across tenants?", ["roles", "long_permissions_design", "impersonate"])
