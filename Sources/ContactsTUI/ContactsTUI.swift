import CNcursesw

public enum ContactsTUIPlaceholder {}
