# top-up of long memories (hand-written context)
_by = {mm["name"]: mm for mm in MEMS}
_add = {
"long_pm_rounding_jpy": ("Context: JPY support had shipped two weeks earlier for a Japanese design studio and one Berlin tenant with Japanese clients; the Money class, PDFs and the UI had been tested with JPY, but the payment path had only been tested with EUR and USD.",
    "Customer communication: Tomás wrote to both tenants the same day; the affected customer received a corrected link. We refunded nothing because nothing was charged. Time to fix: 3 hours from the report to the deploy."),
"long_pm_ci_outage": ("", "Tags: ci, github-actions, flaky-infra."),
"long_design_review_notes": ("Date of review: April 23, Thursday design review slot.", "Status: built in May as part of the hosted payment page (pay/). Usage after three months: about 18% of payments start from the 'all open invoices' view."),
"long_dev_env_troubles": ("Maintained by Priya; add to it whenever you answer the same setup question twice.", "If your problem isn't here, ask in #eng with the exact error text, your OS and whether you run the api on the host or in compose."),
"long_hiring_notes": ("", "Owner: Jun."),
"long_vendor_eval": ("", "Data set: anonymised staging copy."),
"long_pm_search_sync": ("", "Affected tenants: 23, all notified through the support ticket threads. No data loss; search is a derived index."),
}
for _name, (_pre, _suf) in _add.items():
    _c = _by[_name]["content"]
    _by[_name]["content"] = "\n\n".join(x for x in (_pre, _c, _suf) if x)
