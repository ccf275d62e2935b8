# ---- Short facts batch C ----
m("seed_accounts", "06-06", "file_fact", "The e2e stack seeds three users: owner@e2e.test, accountant@e2e.test and viewer@e2e.test, all with password e2e-Passw0rd!.")
q("k", "Which users exist in the e2e seed?", "seed_accounts")
m("staging_login", "04-17", "file_fact", "Staging login for QA: qa-owner@ledgerly.dev (password in 1Password 'Staging QA'); staging Stripe is in test mode with the platform account 'Ledgerly Staging'.")
q("p", "what account do I use to click through staging?", "staging_login")
m("staging_url", "01-09", "file_fact", "Staging URLs: https://app.staging.ledgerly.io and https://api.staging.ledgerly.io; protected by Cloudflare Access (Google login with the company domain).")
q("k", "What are the staging URLs?", "staging_url")
q("p", "an external contractor can't open the staging app, it asks for a Google login", "staging_url")
m("invoice_number_reset", "07-02", "gotcha", "The per-year invoice counter resets on January 1 in the tenant's timezone, not UTC; tenant_counters has a (tenant_id, kind, year) primary key.")
q("p", "will the first invoice of the new year for a tenant in New York start at 1 at midnight UTC?", "invoice_number_reset")
m("invoice_number_gaps", "07-04", "convention", "Invoice numbers must not have gaps (German GoBD requirement); numbers are assigned at finalize inside the transaction, so a rolled back finalize doesn't consume a number. Drafts have no number.")
q("p", "why is the number field empty while a bill is still being edited?", "invoice_number_gaps")
m("customer_number", "03-02", "file_fact", "Customer numbers (CUST-00042) are per tenant and optional; tenants may import their own numbers, uniqueness enforced by uq_customers_tenant_id_number.")
q("k", "Which unique constraint enforces customer numbers per tenant?", "customer_number")
m("products", "03-10", "file_fact", "Products (reusable line items) have name, unit price, unit (hour, day, piece, month), default tax rate; editing a product doesn't change existing invoices.")
q("k", "Which units can products have?", "products")
m("discounts", "05-25", "decision", "Discounts are line-level (percentage or fixed) plus one optional invoice-level percentage; invoice-level discounts are distributed to lines proportionally before tax.")
q("p", "how is a 10% discount on the whole invoice taxed when lines have different tax rates?", "discounts")
m("rounding_total", "04-21", "gotcha", "Invoice total = sum of rounded line totals + sum of rounded line taxes; never round the sum again. The PDF and the API must show identical numbers, and the test test_total_matches_pdf guards that.")
q("k", "How is the invoice total computed from lines?", "rounding_total")
m("payment_reconcile_bank", "10-18", "decision", "Bank transfer payments are recorded manually or via the CSV bank import (camt.053 planned); matching uses invoice number in the reference, then amount + customer.")
q("k", "How are bank transfer payments matched to invoices?", "payment_reconcile_bank")
m("qr_code", "05-05", "file_fact", "Invoice PDFs for EUR include an EPC/GiroCode QR code (SEPA credit transfer) when the tenant has an IBAN set; generated with segno.")
q("p", "customers asked how to pay by scanning something with their banking app", "qr_code")
m("iban_validation", "02-26", "file_fact", "Tenant IBANs are validated with schwifty and stored encrypted (pgcrypto, key from FIELD_ENCRYPTION_KEY); only the last 4 digits are shown in the UI.")
q("k", "How are tenant IBANs stored?", "iban_validation")
m("field_key_rotation", "09-29", "command", "Rotating FIELD_ENCRYPTION_KEY: add the new key as FIELD_ENCRYPTION_KEY and move the old one to FIELD_ENCRYPTION_KEY_OLD, deploy, then run `just backfill reencrypt_fields`; remove the old key after the backfill completes.")
q("p", "we need to change the key that encrypts bank details, what's the procedure?", "field_key_rotation")
m("kms", "08-08", "file_fact", "RDS storage, S3 buckets and Secrets Manager use the customer-managed KMS key alias/ledgerly-prod; the field encryption key is separate and app-level.")
m("gdpr_dpa", "03-05", "file_fact", "Subprocessors list (for the DPA) is in docs/legal/subprocessors.md; adding any new external service that receives personal data requires updating it and notifying Enterprise tenants 30 days ahead.")
q("p", "I want to add a new third-party service that gets customer emails, is there paperwork?", "gdpr_dpa")
m("data_region", "08-04", "file_fact", "All customer data stays in the EU: primary region eu-west-1 (Ireland), backups copied to eu-central-1 (Frankfurt).")
q("k", "In which AWS regions is customer data stored?", "data_region")
m("analytics", "04-26", "decision", "Product analytics with PostHog EU cloud, only in the web app, with person profiles disabled for tenants' customers (hosted payment page has no analytics at all).")
q("k", "Which product analytics tool do we use?", "analytics")
m("cookie_banner", "04-27", "gotcha", "PostHog only loads after consent in the cookie banner (klaro); tests of analytics events must accept the banner first or no events are captured.")
q("p", "I'm testing analytics events locally and nothing shows up in PostHog", "cookie_banner")
m("email_dns", "06-23", "file_fact", "Email sending domain is mail.ledgerly.io with SPF, DKIM (Postmark selector 20260622pm) and DMARC p=quarantine; tenant emails are sent From 'Tenant Name via Ledgerly <invoices@mail.ledgerly.io>' with Reply-To the tenant.")
q("k", "Which From address do invoice emails use?", "email_dns")
q("p", "customers reply to an invoice email; who receives the reply?", "email_dns")
m("email_streams", "06-24", "file_fact", "Postmark message streams: 'outbound' for system emails (password reset, invites), 'tenant-invoices' for tenant-triggered emails; bounces are processed via webhook at /webhooks/postmark.")
q("k", "Which Postmark message stream is used for password reset emails?", "email_streams")
m("inbound_bounce", "06-25", "gotcha", "When Postmark reports a hard bounce, the customer's email is flagged (customers.email_status = 'bounced') and future sends are skipped until the tenant edits the address.")
q("p", "a tenant says their customer never gets invoice emails anymore, even after they asked him to check spam", "inbound_bounce")

m("long_support_playbook", "08-01", "command", """Support escalation playbook (for support staff and the engineer on support rotation).

Tiers: Leonie and the support team handle tier 1 in Plain: how-to questions, account settings, resending emails, explaining SEPA timing. Tier 2 is the weekly 'support engineer' (a rotation separate from on-call, listed in the #support channel topic) for anything that needs logs, the admin, or data inspection. Tier 3 is the owning team for bugs.

What support may do in the admin without an engineer: resend invoice emails, unlock a user after login throttling, extend a trial by up to 14 days, re-send invitations, and trigger a PDF re-render for a single invoice. Everything else, including changing invoice data, merging customers, or changing the plan of a paying tenant, goes to tier 2.

How to escalate: create a Linear issue from the Plain ticket with the 'support' label. Include the tenant id, the invoice number or request id, what the customer expected, and what happened. Severity: S1 (money wrong or data exposed) pings the support engineer immediately; S2 (feature broken for a tenant) within the same day; S3 (annoyance) goes to the weekly triage.

Response targets: S1 first engineering response within 1 hour during business hours, S2 within 1 business day. Customers with an Enterprise contract get S1 handling outside business hours through the on-call.

Never ask customers for passwords or full card numbers; if they send card data in a ticket, delete the message in Plain and tell them we did.""")
q("k", "What may support do in the admin without an engineer?", "long_support_playbook")
q("p", "someone sent their credit card digits to our helpdesk in a message — what's the procedure?", "long_support_playbook")
q("p", "a customer says the total on their invoice is wrong, how urgent is that for engineering?", "long_support_playbook")

q("m", "How do invoice numbers get assigned, and what legal and timezone rules apply?", ["invnum2", "invoice_number_gaps", "invoice_number_reset"])
q("m", "How are invoice totals, discounts and tax rounding calculated?", ["rounding_total", "discounts", "rounding2"])
q("m", "What do I need to know about how our emails are sent and what happens on bounces?", ["email_dns", "email_streams", "inbound_bounce"])
q("m", "How is sensitive data like bank details protected at rest?", ["iban_validation", "kms", "field_key_rotation"])
q("m", "What are the ways a customer can pay an invoice?", ["payment_links", "qr_code", "payment_reconcile_bank"])
q("m", "Where does customer data live and what must I do before sending it to a new vendor?", ["data_region", "gdpr_dpa"])
