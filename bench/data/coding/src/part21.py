# ---- Long memories batch 7 ----
m("long_sentry_triage", "05-09", "convention", """Sentry triage process (agreed May, after the quota overrun).

Context: in April we had 1,900 unresolved Sentry issues, most of them duplicates, expected errors or noise from browser extensions in the web project. Nobody looked at Sentry anymore, which meant real regressions went unnoticed for days. We also ran out of transaction quota in the first week of May because of 100% tracing. This note sets out how we keep Sentry useful.

Projects: ledgerly-api (backend and workers), ledgerly-web (web app), ledgerly-pay (hosted payment page). Each project has alert rules: a new issue in production posts to #sentry; an issue with more than 50 events in an hour or affecting more than 10 users pages nobody but posts to #alerts.

Ownership: the ownership rules file in each project maps paths to teams (billing paths -> billing, web/src -> frontend). Issues without an owner go to whoever is on-call that week.

Weekly triage: every Monday the on-call engineer spends up to an hour on the 'For Review' list: assign, resolve with 'in next release', or ignore. Ignoring is allowed only with a reason in a comment and for a bounded time ('ignore until 100 more events' or 14 days), never forever. The reason: a forever-ignored issue hid the Stripe Connect webhook failures in October for five days.

Noise control: browser extension errors and ResizeObserver loop warnings are filtered client-side in web/src/sentry.ts via ignoreErrors and denyUrls. Expected 4xx API errors are dropped server-side in before_send.

Releases: every deploy creates a Sentry release named after the git tag, with commits associated, so 'suspect commits' work. If an issue's first-seen release is the one just deployed, consider a rollback before debugging.""")
q("k", "When does the weekly Sentry triage happen and who does it?", "long_sentry_triage")
q("p", "a useless error keeps showing up in our error tracker, can I mute it forever?", "long_sentry_triage")
q("k", "Where are browser extension errors filtered for the web Sentry project?", "long_sentry_triage")

m("long_pm_flags_outage", "07-30", "gotcha", """Post-mortem: features toggled off for all tenants during the Unleash cutover (2026-07-29).

Severity: SEV2. Author: Jun. Duration: 47 minutes.

What happened: when moving from LaunchDarkly to self-hosted Unleash we migrated flag definitions with a script. The script created all flags and their strategies in Unleash, and we deployed the api with the new ledgerly.flags client. The Unleash server was healthy, but the production environment in Unleash had every flag disabled by default — the script had enabled flags only in the 'development' environment, because the Unleash admin API's default environment parameter is development when you don't pass one. As a result, everything behind a flag was off in production: the new dunning settings page disappeared, recurring invoices stopped being generated (billing-recurring-v1 was still a flag at 100%), and the invoice editor fell back to an old code path.

Detection: support tickets after 15 minutes ('where did my recurring invoices go?'); nothing alerted because the application was healthy.

Fix: enabled the flags in production via the admin UI after comparing with a LaunchDarkly export; the hourly recurring generation caught up automatically on its next run.

Changes: (1) flags that have been at 100% for more than 90 days get removed from code — billing-recurring-v1 should have been gone months earlier; (2) ledgerly.flags logs a warning at startup listing flags that are known in code but disabled in the current environment; (3) the flag client has a per-flag safe default used when the server is unreachable, declared next to the flag in ledgerly/flags/registry.py, which is the only place a new flag may be declared.""")
q("k", "Where must a new feature flag be declared in the backend?", "long_pm_flags_outage")
q("p", "if our toggle service goes down, what do the code paths behind toggles do?", "long_pm_flags_outage")
q("p", "why did recurring invoices stop being generated for almost an hour at the end of July?", "long_pm_flags_outage")

m("long_mobile_web", "05-26", "noise", """Exploration notes: should we build a mobile app? (May, Jun and Marcus)

Usage data: 14% of sessions in the web app are from phones, mostly to check whether an invoice was paid or to send a reminder. Almost nobody creates invoices on a phone; those who try abandon the editor at the line items step.

Options discussed: (a) native apps with React Native sharing the API client, (b) a PWA with push notifications for 'invoice paid', (c) just make the important read-only screens responsive.

Cost estimates: native, at least two months for a first version plus ongoing store maintenance; PWA, about three weeks, but iOS push for PWAs only works when installed to the home screen, which few users do; responsive fixes, one to two weeks.

Competitors: two of the four we compared have native apps, rated around 3.5 stars with complaints about missing features.

Outcome: option (c) for Q3 (responsive dashboard, invoice list and invoice detail), and revisit PWA push if customers keep asking. Native apps are not planned for 2026. This was discussed again in Q3 planning and confirmed as 'not doing'.""")

m("long_tenant_lifecycle", "06-05", "decision", """Design note: tenant lifecycle (signup to deletion).

Signup creates the user, the tenant, the owner membership and a trial subscription in one transaction (TenantService.signup). The tenant starts in state trialing with plan Pro for 14 days. Onboarding steps (company details, logo, first customer, first invoice, connect Stripe) are tracked in tenant_onboarding and drive the checklist in the dashboard; they don't block anything.

At trial end, if no payment method was added, the tenant moves to plan Free, not to a locked state. Data is never locked because of non-payment on Free; paid tenants whose card fails get 14 days of past_due with banners, then move to Free, and their invoices over the Free limit can still be viewed and paid but no new ones created.

Our own billing of tenants uses Stripe Billing on the platform account (not Connect), customer id in tenants.platform_customer_id. The subscription webhooks are handled by ledgerly/platform_billing/, which is deliberately separate from ledgerly/billing/ (tenants' invoicing of their customers). Confusing these two is the most common mistake new engineers make; the directory names are the hint.

Deletion: owner requests deletion in Settings > Danger zone; the tenant is scheduled for deletion and everything is hard-deleted after the grace period, except records we must keep for our own accounting (our invoices to the tenant). Stripe Connect accounts are disconnected immediately on the request, not after the grace period.""")
q("k", "Which package handles webhooks for our own subscription billing of tenants?", "long_tenant_lifecycle")
q("p", "a paying tenant's card keeps failing, when do they lose paid features?", "long_tenant_lifecycle")
q("p", "a signup let the two-week trial run out without entering billing info — can they still get at their stuff?", "long_tenant_lifecycle")
q("m", "What happens when a tenant decides to leave: exporting data and deleting the account?", ["long_export", "tenant_delete", "long_tenant_lifecycle"])

m("long_pm_deploy_secret", "08-19", "gotcha", """Post-mortem: failed deploy because of a missing secret (2026-08-18).

Severity: SEV3 (no customer impact, deploy blocked for 2 hours). Author: Aisha.

The release containing the Meilisearch groundwork added a new required setting MEILI_URL to ledgerly/config.py. The .env.example was updated, the settings-drift check passed, and staging had the value because Tomás had added it by hand in the staging secret. The production secret in Secrets Manager did not have the key. ECS started the new tasks, pydantic-settings raised a validation error at import time, the tasks exited with code 1, and ECS kept the old tasks running because the deployment circuit breaker rolled back after 3 failed task starts. Good outcome, but confusing: the deploy workflow reported success because it only waited for the service update API call, not for the deployment to stabilize.

Changes: (1) the deploy workflow now runs `aws ecs wait services-stable` and fails if the circuit breaker triggered; (2) the release checklist asks 'new settings?' and the release-please PR body lists settings added since the last release (a small script diffs config.py); (3) new settings must either have a safe default or be added to both staging and production secrets in the same PR via Terraform (the secret keys, not the values, are declared in infra/envs/*/secrets.tf), so a missing key fails the Terraform plan instead of the deploy.""")
q("p", "after shipping, the new containers crash on boot complaining about configuration and prod stays on the old version", "long_pm_deploy_secret")
q("k", "How does the deploy workflow detect that the ECS deployment rolled back?", "long_pm_deploy_secret")
q("m", "What do I have to do when I add a new required setting to the backend?", ["env_example", "long_pm_deploy_secret", "settings"])

m("long_accounting_export", "10-23", "decision", """Design note: DATEV export (Q4 research, accepted).

German tenants, and especially their tax advisors, want bookings in DATEV format. Until now they exported CSV and mapped columns by hand every month. The accounting firm reseller asked for it in May and again in September; three other tenants cite it as the reason they might leave.

Format: DATEV 'Buchungsstapel' CSV (EXTF format, version 700), one row per invoice (or per tax rate for mixed-rate invoices), with the header line containing consultant number (Beraternummer) and client number (Mandantennummer) which the tenant enters in Settings > Accounting. Revenue accounts depend on the chart of accounts (SKR03 or SKR04) and tax rate; we ship default mappings for both (e.g. SKR03: 8400 for 19%, 8300 for 7%) and let tenants override per tax rate.

Encoding must be Windows-1252 with CRLF line endings and semicolon delimiter; UTF-8 breaks DATEV's importer on umlauts. Amounts use a comma as decimal separator and no thousands separator.

Scope: invoices and credit notes (credit notes as negative amounts with the reversing booking key), not payments in v1. Export by month, from Reports > Accounting export. Behind flag billing-datev-export.

Validation: we validated the sample output with the accounting firm's tax advisor, who imported it into DATEV Unternehmen online without errors.""")
q("k", "Which encoding and line endings must the DATEV export use?", "long_accounting_export")
q("p", "a Steuerberater wants our revenue postings in the format their German bookkeeping software imports — possible?", "long_accounting_export")
q("k", "Which account numbers are the SKR03 defaults for 19% and 7% revenue?", "long_accounting_export")
