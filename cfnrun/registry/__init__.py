"""The extension registry on serve: RegisterType's packages, versions and registrations, and the API operations on them."""
