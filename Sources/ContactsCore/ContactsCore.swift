public enum ContactsCorePlaceholder {}
